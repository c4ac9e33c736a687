"""Who is the client: its address, believing X-Forwarded-For only from trusted proxies.

``--trusted-proxies`` is a comma-separated list of addresses or networks
(``10.244.3.0/24``, ``172.30.0.2``): behind a proxy every request comes from the
proxy's address, so without them every client would share one address's limits.
"""

from __future__ import annotations

import functools
import ipaddress
import logging

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
log = logging.getLogger("service.web.addresses")


@functools.lru_cache(maxsize=16)
def trusted_networks(setting: str) -> tuple[Network, ...]:
    """The networks of a ``trusted_proxies`` setting (a bare address is a /32 or /128)."""
    out: list[Network] = []
    for item in setting.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"trusted_proxies: {item!r} is not an address or a network") from None
    return tuple(out)


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in net for net in networks)


def client_address(remote: str | None, forwarded_for: str, trusted_proxies: str) -> str:
    """The client's address: behind trusted proxies, the last X-Forwarded-For hop that
    is not one of them (the hops before it could have been written by the client)."""
    remote = remote or "unknown"
    networks = trusted_networks(trusted_proxies)
    if not networks or not _trusted(remote, networks):
        if forwarded_for:
            _not_believed(remote)
        return remote
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            return hop
    return remote


# Peers whose X-Forwarded-For was not believed, each said once (at most this many a process).
_UNTRUSTED_SEEN: set[str] = set()
_UNTRUSTED_SAID = 16


def _not_believed(remote: str) -> None:
    """Say once per peer that its X-Forwarded-For is not believed: if the peer is the
    operator's proxy (an Ingress controller left out of ``trusted_proxies``), every client
    behind it shares one address's limits, and the operator must hear of it."""
    if remote in _UNTRUSTED_SEEN or len(_UNTRUSTED_SEEN) >= _UNTRUSTED_SAID:
        return
    _UNTRUSTED_SEEN.add(remote)
    log.warning("requests from %s carry X-Forwarded-For, which is not believed: %s is not in "
                "trusted_proxies. If it is your proxy, every client behind it shares its "
                "per-address limits: add it to SOLITAIRE_TRUSTED_PROXIES (deploy/README.md, "
                "'Who may connect')", remote, remote)
