"""A throwaway CA and a server certificate for 127.0.0.1/localhost, made at
test time with ``cryptography`` (nothing secret is checked in)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Pki:
    ca: Path          # CA certificate (the clients' truststore)
    keystore: Path    # server certificate chain + private key, one PEM file
    cert: Path        # server certificate alone
    key: Path         # server private key alone


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kipper tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (x509.CertificateBuilder().subject_name(_name("kipper test CA")).issuer_name(_name("kipper test CA"))
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False,
                                            encipher_only=False, decipher_only=False), critical=True)
               .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pki = Pki(directory / "ca.pem", directory / "server-keystore.pem",
                  directory / "server.pem", directory / "server.key")
    ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    pki.ca.write_bytes(ca_pem)
    pki.cert.write_bytes(cert_pem + ca_pem)
    pki.key.write_bytes(_pem_key(key))
    pki.keystore.write_bytes(_pem_key(key) + cert_pem + ca_pem)
    return pki


# --- a broker with every kind of listener ------------------------------------------------

USERS = {"alice": "alice-secret", "admin": "admin-secret", "rogue": "rogue-secret", "good": "good-secret",
         "bob": "bob-secret"}


@dataclass
class SecureBroker:
    """A real broker with PLAINTEXT, SASL_PLAINTEXT, SASL_SSL and SSL listeners,
    a config.dir holding USERS, and a test CA. ``process`` is the BrokerProcess."""

    process: object
    pki: Pki
    config_dir: Path
    ports: dict

    def bootstrap(self, protocol: str) -> str:
        return f"127.0.0.1:{self.ports[protocol]}"

    def settings(self, protocol: str, mechanism: str = "SCRAM-SHA-256", user: str = "alice",
                 password: str | None = None) -> dict[str, str]:
        """Command-config style settings for kipper.client.connect.connect."""
        out = {"security.protocol": protocol, "ssl.truststore.location": str(self.pki.ca)}
        if protocol.startswith("SASL_"):
            out.update({"sasl.mechanism": mechanism, "sasl.username": user,
                        "sasl.password": USERS.get(user, "") if password is None else password})
        return out

    def stop(self) -> None:
        self.process.stop()


def start_secure_broker(directory: Path, overrides: dict[str, str] | None = None) -> SecureBroker:
    from kipper.broker.security.credentials import CredentialStore
    from tests.support.broker import BrokerProcess, free_port

    pki = make_pki(directory / "pki")
    config_dir = directory / "config"
    store = CredentialStore(str(config_dir))
    for user, password in USERS.items():
        store.add_user(user, password)
    ports = {p: free_port() for p in ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL")}
    listeners = ",".join(f"{p}://127.0.0.1:{port}" for p, port in ports.items())
    values = {"config.dir": str(config_dir), "ssl.keystore.location": str(pki.keystore),
              **(overrides or {})}
    proc = BrokerProcess(values, port=ports["PLAINTEXT"], listeners=listeners).start()
    return SecureBroker(proc, pki, config_dir, ports)
