"""TLS for SSL and SASL_SSL listeners, from PEM files, with Python's ssl module.

``server_context`` builds one ``ssl.SSLContext`` from the ssl.* keys.
``principal_from_cert`` turns a verified client certificate into Kafka's
principal for SSL listeners: User:<subject DN in RFC 2253 order>.
"""

from __future__ import annotations

import ssl


def server_context(config) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(config["ssl.keystore.location"], config["ssl.key.location"] or None,
                        password=config["ssl.key.password"] or None)
    auth = config["ssl.client.auth"]
    if auth != "none":
        ctx.load_verify_locations(cafile=config["ssl.truststore.location"])
        ctx.verify_mode = ssl.CERT_REQUIRED if auth == "required" else ssl.CERT_OPTIONAL
    return ctx


_SHORT = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
          "countryName": "C", "stateOrProvinceName": "ST", "localityName": "L",
          "domainComponent": "DC", "userId": "UID", "emailAddress": "EMAILADDRESS"}


def principal_from_cert(peercert: dict | None) -> str | None:
    """``ssl.SSLObject.getpeercert()`` lists RDNs most-general first; RFC 2253
    (Kafka's X500Principal.getName()) lists them most-specific first."""
    if not peercert or not peercert.get("subject"):
        return None
    rdns = []
    for rdn in reversed(peercert["subject"]):
        rdns.append("+".join(f"{_SHORT.get(k, k)}={_escape(v)}" for k, v in rdn))
    return "User:" + ",".join(rdns)


def _escape(value: str) -> str:
    out = []
    for i, c in enumerate(value):
        if c in ',+"\\<>;' or (c in "# " and i == 0) or (c == " " and i == len(value) - 1):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)
