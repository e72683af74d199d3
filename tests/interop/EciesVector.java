// Test vectors for pulsarc's ECIES data-key wrap (tests/unit/test_encryption.c), made with
// BouncyCastle exactly as the Java client's MessageCryptoBc does it: the "ECIES" cipher of
// the BC provider, IESParameterSpec(null, null, 128), keys read with PEMParser.
//
//   java -cp "$PULSAR_HOME_DIR/lib/*" EciesVector.java wrap PUBLIC_PEM HEX_DATA_KEY
//   java -cp "$PULSAR_HOME_DIR/lib/*" EciesVector.java unwrap PRIVATE_PEM HEX_WRAPPED
//
// prints the wrapped key (wrap) or the data key (unwrap) in hex.
import java.io.FileReader;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Security;
import java.util.HexFormat;

import javax.crypto.Cipher;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.jce.spec.IESParameterSpec;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

public class EciesVector {
    public static void main(String[] args) throws Exception {
        Security.addProvider(new BouncyCastleProvider());
        JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
        Object pem;
        try (PEMParser p = new PEMParser(new FileReader(args[1]))) {
            pem = p.readObject();
        }
        Cipher c = Cipher.getInstance("ECIES", "BC");
        IESParameterSpec spec = new IESParameterSpec(null, null, 128);
        byte[] in = HexFormat.of().parseHex(args[2]);
        if (args[0].equals("wrap")) {
            PublicKey pub = conv.getPublicKey((SubjectPublicKeyInfo) pem);
            c.init(Cipher.ENCRYPT_MODE, pub, spec);
        } else {
            PrivateKey priv = pem instanceof PEMKeyPair
                    ? conv.getPrivateKey(((PEMKeyPair) pem).getPrivateKeyInfo())
                    : conv.getPrivateKey((PrivateKeyInfo) pem);
            c.init(Cipher.DECRYPT_MODE, priv, spec);
        }
        System.out.println(HexFormat.of().formatHex(c.doFinal(in)));
    }
}
