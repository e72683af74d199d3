// The Java client's consumer as a second, independent decrypter for the encryption interop
// tests (test_encryption.py compiles it with javac against the Pulsar tarball's jars).
//
//   java DecryptingConsumer SERVICE_URL TOPIC PRIVATE_KEY_PEM COUNT TIMEOUT_S
//
// Subscribes from the earliest message with the private key (any key name) and
// cryptoFailureAction FAIL, so a message it cannot decrypt is never handed over. Prints one
// line per message, "MSG <sha256 hex> <length> <'index' property or ->", then
// "END <received>" once COUNT messages arrived or TIMEOUT_S passed.
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerCryptoFailureAction;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.impl.DefaultCryptoKeyReader;

public class DecryptingConsumer {
    public static void main(String[] args) throws Exception {
        String url = args[0], topic = args[1], privateKey = args[2];
        int count = Integer.parseInt(args[3]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[4]));
        int received = 0;
        try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build();
             Consumer<byte[]> consumer = client.newConsumer()
                     .topic(topic)
                     .subscriptionName("java-decrypt-check")
                     .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                     .cryptoKeyReader(DefaultCryptoKeyReader.builder()
                             .defaultPrivateKey("file://" + privateKey).build())
                     .cryptoFailureAction(ConsumerCryptoFailureAction.FAIL)
                     .subscribe()) {
            while (received < count) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0)
                    break;
                Message<byte[]> msg =
                        consumer.receive((int) Math.min(left, 1000), TimeUnit.MILLISECONDS);
                if (msg == null)
                    continue;
                byte[] data = msg.getValue();
                byte[] digest = MessageDigest.getInstance("SHA-256").digest(data);
                String index = msg.getProperty("index");
                System.out.println("MSG " + HexFormat.of().formatHex(digest) + " " + data.length
                        + " " + (index == null ? "-" : index));
                consumer.acknowledge(msg);
                received++;
            }
        }
        System.out.println("END " + received);
    }
}
