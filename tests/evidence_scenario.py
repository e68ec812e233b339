"""A synthetic observation stream: a clean background (uniform, or heavy-tailed like real logs), and known patterns
planted into it.

Shared by the evidence tests and benchmarks/evidence.py. Everything is seeded, so a
scenario is the same on every machine."""

from __future__ import annotations

import random

START = 1_780_000_000  # 2026-05-28
SPAN = 30 * 86_400
NOW = START + SPAN

TARGET_SECTOR = "sector:s-target"
CONVERGING = ("drone:x1", "drone:x2")
HUB = "host:c2"
SPOKE = "account:spoke"
BURST = "ip:10.6.6.6"
CLUSTER = [f"user:ring{i}" for i in range(6)]
LATERAL = ["host:lm-a", "host:lm-b", "host:lm-c", "host:lm-d"]
LATERAL_ACCOUNT = "account:svc-backup"
BEACON = ("host:beacon-src", "ip:203.0.113.9")

CONVERGE_RULE = (
    "converge(A, B, S)",
    "hedge(E1, 'DRONE_EVENT', T1, _), member(E1, A), entity_type(A, drone), member(E1, S), entity_type(S, sector), "
    "hedge(E2, 'DRONE_EVENT', T2, _), member(E2, B), entity_type(B, drone), member(E2, S), A @< B, "
    "D is T2 - T1, D >= -600, D =< 600",
)
THREAT_RULE = ("coordinated_threat(S)", "converge(A, B, S)")


def background(n: int, seed: int = 7) -> list[dict]:
    """n observations of ordinary activity spread evenly over SPAN."""
    rng = random.Random(seed)
    accounts = [f"account:a{i}" for i in range(max(50, n // 50))]
    hosts = [f"host:h{i}" for i in range(max(20, n // 250))]
    ips = [f"ip:10.0.{i // 250}.{i % 250}" for i in range(max(50, n // 70))]
    drones = [f"drone:d{i}" for i in range(30)]
    sectors = [f"sector:s{i}" for i in range(60)]
    out = []
    for _ in range(n):
        ts = START + rng.randrange(SPAN)
        roll = rng.random()
        if roll < 0.49:
            members = [rng.choice(accounts), rng.choice(hosts)]
        elif roll < 0.50:  # a remote login: account, source host, destination host
            members = [rng.choice(accounts), *rng.sample(hosts, 2)]
        elif roll < 0.60:
            members = [rng.choice(drones), rng.choice(sectors)]
        else:
            members = [rng.choice(ips), rng.choice(hosts)]
        out.append({"members": members, "event_ts": ts, "weight": round(rng.uniform(0.5, 1.0), 3)})
    return out


def planted(seed: int = 11) -> list[dict]:
    """One of each pattern: a hub with a spoke, a burst, a dense cluster, two drones converging, a
    lateral-movement chain and a beaconing host."""
    rng = random.Random(seed)
    out = []
    for i in range(1000):  # hub: one host talking to many accounts all month
        out.append({"members": [f"account:hub{i % 150}", HUB], "event_ts": START + rng.randrange(SPAN)})
    for _ in range(80):  # a spoke: one account that keeps accompanying the hub (EigenSpokes' pattern)
        out.append({"members": [SPOKE, HUB], "event_ts": START + rng.randrange(SPAN)})
    base = START + 10 * 86_400
    for i in range(60):  # burst: sixty events in twenty minutes
        out.append({"members": [BURST, f"host:burst{i % 7}"], "event_ts": base + rng.randrange(1200)})
    for _ in range(40):  # dense cluster: six users always together
        out.append({"members": rng.sample(CLUSTER, 3), "event_ts": START + rng.randrange(SPAN)})
    t = START + 20 * 86_400
    out.append({"members": [CONVERGING[0], TARGET_SECTOR], "event_ts": t, "weight": 0.9, "formation": "SIGHTING"})
    out.append({"members": [CONVERGING[1], TARGET_SECTOR], "event_ts": t + 240, "weight": 0.8,
                "formation": "SIGHTING"})
    t = START + 25 * 86_400
    for i, (src, dst) in enumerate(zip(LATERAL, LATERAL[1:])):  # lateral movement: three quick hops
        out.append({"members": [LATERAL_ACCOUNT, src, dst], "event_ts": t + i * 600})
    t = START + 5 * 86_400
    for i in range(30):  # beaconing: every five minutes, a few seconds of jitter
        out.append({"members": list(BEACON), "event_ts": t + i * 300 + rng.randrange(-3, 4)})
    return out


def with_patterns(n: int, seed: int = 7) -> list[dict]:
    """A background of n - len(planted) observations plus the planted ones: n in all."""
    plant = planted()
    return background(n - len(plant), seed) + plant


def zipf_background(n: int, seed: int = 5, exponent: float = 1.1) -> list[dict]:
    """n observations of clean heavy-tailed activity, as real logs are: each member is drawn with probability
    proportional to 1 / rank^exponent within its type (a few accounts, hosts and IPs do most of the work),
    at uniformly random times over SPAN. Nothing is planted."""
    rng = random.Random(seed)

    def population(kind: str, size: int) -> tuple[list[str], list[float]]:
        names = [f"{kind}:z{i}" for i in range(size)]
        weights = [1 / (rank + 1) ** exponent for rank in range(size)]
        return names, weights

    accounts, hosts, ips = population("account", 500), population("host", 120), population("ip", 400)
    drones, sectors = population("drone", 40), population("sector", 80)

    def pick(pool: tuple[list[str], list[float]], k: int = 1) -> list[str]:
        chosen: list[str] = []
        while len(chosen) < k:
            name = rng.choices(pool[0], pool[1])[0]
            if name not in chosen:
                chosen.append(name)
        return chosen

    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.49:
            members = pick(accounts) + pick(hosts)
        elif roll < 0.50:  # a remote login: account, source host, destination host
            members = pick(accounts) + pick(hosts, 2)
        elif roll < 0.60:
            members = pick(drones) + pick(sectors)
        else:
            members = pick(ips) + pick(hosts)
        out.append({"members": members, "event_ts": START + rng.randrange(SPAN),
                    "weight": round(rng.uniform(0.5, 1.0), 3)})
    return out


NIGHTLY = ("host:backup01", "ip:198.51.100.7")  # a benign job: every night at 02:00 UTC, a minute or two late


def rhythmic_background(n: int, seed: int = 3) -> list[dict]:
    """n observations of clean activity with the rhythm of real logs: heavy-tailed members (as zipf_background),
    most activity in business hours (08:00-18:00 UTC, peaking at 10:00 and 14:00) on weekdays, a tenth of
    it at night and on weekends, and one benign job every night at 02:00. Nothing is planted."""
    rng = random.Random(seed)
    accounts = [f"account:r{i}" for i in range(300)]
    hosts = [f"host:r{i}" for i in range(80)]
    ips = [f"ip:10.9.{i // 200}.{i % 200}" for i in range(300)]

    def zipf(names: list[str]) -> str:
        return rng.choices(names, [1 / (rank + 1) ** 1.1 for rank in range(len(names))])[0]

    def moment() -> int:
        while True:
            day = rng.randrange(SPAN // 86_400)
            weekend = (datetime_weekday(START + day * 86_400)) >= 5
            if rng.random() < 0.1:  # night or weekend work
                return START + day * 86_400 + rng.randrange(86_400)
            if weekend:
                continue
            peak = rng.choice((10, 14))
            hour = min(17.99, max(8.0, rng.gauss(peak, 1.6)))
            return START + day * 86_400 + int(hour * 3_600)

    out = []
    for _ in range(n - SPAN // 86_400):
        roll = rng.random()
        if roll < 0.6:
            members = [zipf(accounts), zipf(hosts)]
        else:
            members = [zipf(ips), zipf(hosts)]
        if members[0] == members[1]:
            continue
        out.append({"members": members, "event_ts": moment(), "weight": round(rng.uniform(0.5, 1.0), 3)})
    for day in range(SPAN // 86_400):
        out.append({"members": list(NIGHTLY), "event_ts": START + day * 86_400 + 7_200 - START % 86_400
                    + rng.randrange(30, 150)})
    return out


def datetime_weekday(ts: int) -> int:
    return ((ts // 86_400) + 3) % 7  # 1970-01-01 was a Thursday (3)


PER_HOST_ACCOUNT = "account:intruder"
PER_HOST_HOSTS = ["host:r70", "host:r71", "host:r72", "host:r73", "host:r74"]
QUIET_HOST = "host:quiet"
NEW_BEACON = ("host:r3", "ip:192.0.2.66")


def rhythmic_planted(seed: int = 13) -> list[dict]:
    """Patterns planted into rhythmic_background: a hub, lateral movement as one login observation per host,
    two accounts converging on a quiet host, and a new beacon every five minutes."""
    rng = random.Random(seed)
    out = [{"members": [f"account:visitor{i}", "host:hub"], "event_ts": START + rng.randrange(SPAN)}
           for i in range(70)]
    t = START + 12 * 86_400 + 3 * 3_600
    out += [{"members": [PER_HOST_ACCOUNT, host], "event_ts": t + 420 * i} for i, host in enumerate(PER_HOST_HOSTS)]
    t = START + 18 * 86_400 + 23 * 3_600
    out += [{"members": ["account:r5", QUIET_HOST], "event_ts": t},
            {"members": ["account:r9", QUIET_HOST], "event_ts": t + 180}]
    t = START + 27 * 86_400
    out += [{"members": list(NEW_BEACON), "event_ts": t + 300 * i + rng.randrange(-4, 5)} for i in range(24)]
    return out
