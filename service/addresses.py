"""Who is the client: its address, believing X-Forwarded-For only from trusted proxies.

``--trusted-proxies`` is a comma-separated list of addresses or networks
(``10.0.0.0/8``, ``172.30.0.2``): behind a proxy every request comes from the
proxy's address, so without them every client would share one address's limits.
"""

from __future__ import annotations

import functools
import ipaddress

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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
        return remote
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            return hop
    return remote
