# Sourced by bench/compare and bench/instructions (after scripts/common.sh, for die).
# The TLS cases' certificates, made afresh for the run and kept with its results (never
# committed): a test CA and a broker certificate for localhost and 127.0.0.1 (the null
# broker's address, which pulsarc checks), RSA 2048 as scripts/broker-secure makes them.
make_bench_certs() {  # dir
  local d="$1"
  mkdir -p "$d"
  chmod 700 "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key.pem" -out "$d/ca.cert.pem" \
    -days 2 -sha256 -subj "/CN=pulsarc bench CA" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$d/broker.key.pem" -out "$d/broker.csr" \
    -subj "/CN=localhost" 2>/dev/null
  printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1' 'basicConstraints=CA:FALSE' \
    'keyUsage=critical,digitalSignature,keyEncipherment' 'extendedKeyUsage=serverAuth' >"$d/broker.ext"
  openssl x509 -req -in "$d/broker.csr" -CA "$d/ca.cert.pem" -CAkey "$d/ca.key.pem" \
    -set_serial "0x$(openssl rand -hex 8)" -days 2 -sha256 -extfile "$d/broker.ext" \
    -out "$d/broker.cert.pem" 2>/dev/null
  rm -f "$d/broker.csr" "$d/broker.ext"
  [[ -s "$d/broker.cert.pem" ]] || die "could not make the TLS cases' certificates in $d"
}
