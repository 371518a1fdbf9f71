"""Who a connection comes from, as the deployment sees it (no Streamlit): the client's address, for the limits on
guessing (session/limits.py). Never a header a client sets: `X-Forwarded-For` names the client only when the
connection comes from a proxy the operator declared trusted ($SCHEDLAB_TRUSTED_PROXIES: addresses or networks,
comma-separated), whose own configuration overwrites the header (tools/nginx_schedlab*.conf set it from nginx's
$remote_addr). Anything else is the connection's own address.

The Streamlit server (uvicorn) has already replaced the address of a connection from 127.0.0.1 or ::1 with the
header's last entry (its $FORWARDED_ALLOW_IPS), so the address reported is undone here: an address that the header
itself names came from a loopback proxy (or a client naming itself, which only files it with this machine's own).
Streamlit reports no address for loopback; every connection of this machine is one client, LOOPBACK.
"""

from __future__ import annotations

import ipaddress
import os

TRUSTED_PROXIES_ENV = "SCHEDLAB_TRUSTED_PROXIES"
LOOPBACK = "127.0.0.1"


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None


def trusted_proxies(value: str | None = None) -> list:
    """The networks of the proxies the operator declared ($SCHEDLAB_TRUSTED_PROXIES, or `value`); what is not an
    address or network is left out."""
    text = os.environ.get(TRUSTED_PROXIES_ENV, "") if value is None else value
    return [net for part in text.split(",") if part.strip() and (net := _network(part)) is not None]


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address((text or "").strip().strip("[]"))
    except ValueError:
        return None


def _trusted(address: str, proxies: list) -> bool:
    parsed = _address(address)
    return parsed is not None and any(parsed in net for net in proxies)


def forwarded_chain(headers: list[str]) -> list[str]:
    """The addresses `X-Forwarded-For` headers name, first (the client, by its word) to last (the nearest proxy)."""
    return [part.strip() for header in headers for part in header.split(",") if part.strip()]


def client_identity(reported: str | None, forwarded_for: list[str], proxies: list) -> str:
    """The client's address: `reported` is Streamlit's (None for loopback), `forwarded_for` the connection's
    X-Forwarded-For headers, `proxies` the trusted proxies' networks. Walking the chain back from the connection,
    each trusted proxy hands over to the address it names; the first hop not trusted is the client."""
    chain = forwarded_chain(forwarded_for)
    peer = reported or LOOPBACK
    if chain and reported in chain:  # uvicorn took it from the header: the connection itself came from loopback
        peer = LOOPBACK
    for hop in reversed(chain):
        if not _trusted(peer, proxies) or _address(hop) is None:
            break
        peer = hop
    return str(_address(peer) or peer)
