#!/usr/bin/env bash
# Throwaway certificates for the PostgreSQL TLS tests (.ci/run calls this):
#   ca.crt        a root the tests trust
#   server.crt    for DNS:localhost only (so 127.0.0.1 passes verify-ca, fails verify-full)
#   client.crt    CN=tether_cert, for `cert` authentication
#   other-ca.crt  a root that signed nothing here (verification must fail with it)
# P-256 keys, valid two days. Usage: pg-tls-certs.sh DIR
set -euo pipefail
dir="$1"
mkdir -p "$dir"
cd "$dir"
umask 077
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
root() {
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -days 2 -subj "/CN=$2" -out "$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}
leaf() { # name CN extensions
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
root ca "Tether test root"
root other-ca "Tether unrelated root"
leaf server localhost $'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth'
leaf client tether_cert "extendedKeyUsage=clientAuth"
rm -f ca.key other-ca.key ca.srl
chmod 644 ca.crt other-ca.crt server.crt client.crt
