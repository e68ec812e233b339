"""An incident scenario (logins, a deployment, alerts, outbound connections, a lateral hop) and answers to gate
over it, honest and adversarial side by side: each honest one must be kept, each adversarial one stripped.

Also the reference's own drones example, and recall phrasings with what each must mean. NOW is
2026-03-28 12:00 UTC, a Saturday. Tags are written {name} and filled in from what `build` stored;
{lm} is the STEP tag of lateral_movement('account:mallory')."""

from __future__ import annotations

from memory import Memory

NOW = 1_774_699_200  # 2026-03-28T12:00:00Z, a Saturday
DAY = 86_400
MAR20 = 1_773_964_800  # 2026-03-20T00:00:00Z, a Friday

LATERAL_RULE = ("lateral_movement(A)",
                "hedge(E, 'AUTH_EVENT', _, _), member(E, A), entity_type(A, account), member(E, S), "
                "entity_type(S, host), member(E, D), entity_type(D, host), S @< D")
OBSERVATIONS = {  # name: (members, event_ts, weight, label)
    "erin": (["account:erin", "host:web02"], NOW - 4 * DAY - 9_900, 1.0, ""),  # Tuesday 03-24 09:15
    "deploy": (["service:billing", "host:web02"], NOW - 2 * DAY, 1.0, "deployed"),
    "alert": (["alert:disk-full", "host:web02"], NOW - DAY, 0.8, "alert"),
    "mallory": (["account:mallory", "host:db01"], MAR20 + 36_000, 1.0, ""),  # 03-20 10:00
    "bob": (["account:bob", "host:db01"], MAR20 + 39_600, 1.0, ""),  # 03-20 11:00
    "carol": (["account:carol", "host:db01"], MAR20 + DAY + 36_000, 1.0, ""),  # 03-21 10:00
    "dave": (["account:dave", "host:db02"], MAR20 + 36_000, 1.0, ""),  # 03-20 10:00, another host
    "xavier": (["account:xavier", "host:db01"], MAR20 + 6 * DAY + 32_400, 1.0, ""),  # 03-26 09:00
    "yuri": (["account:yuri", "host:db01"], MAR20 + 52_200, 1.0, ""),  # 03-20 14:30
    "hop": (["account:mallory", "host:app01", "host:db02"], MAR20 + DAY + 7_200, 1.0, ""),  # 03-21 02:00
    **{f"out{i}": (["host:db02", f"ip:203.0.113.{i}"], MAR20 + 2 * DAY + 600 * i, 0.5, "outbound connection")
       for i in range(6)},  # 03-22
}

HONEST = [
    "account:erin logged in to host:web02 4 days ago [{erin}].",
    "account:erin logged in to host:web02 last Tuesday [{erin}].",
    "account:erin logged in to host:web02 on Tuesday, March 24 [{erin}].",
    "The deployment of service:billing to host:web02 was recorded [{deploy}].",
    "service:billing was deployed to host:web02 [{deploy}].",
    "service:billing was deployed to host:web02 2 days ago [{deploy}].",
    "host:web02 raised an alert yesterday [{alert}].",
    "account:mallory moved laterally [{lm}].",
    "account:mallory moved laterally from host:app01 to host:db02 [{lm}].",
    "The lateral_movement rule fired for account:mallory [{lm}].",
    "account:mallory logged in to host:db01 on 20/03/2026 [{mallory}].",
    "account:mallory logged in to host:db01 on 3/20/2026 [{mallory}].",
    "account:mallory logged in to host:db01 on 2026-03-20 at 10:00 UTC [{mallory}].",
    "account:mallory logged in to host:db01 once [{mallory}].",
    "account:mallory logged in to host:db01 1 time [{mallory}].",
    "account:mallory made 2 logins [{mallory}] [{hop}].",
    "Two accounts logged in to host:db01 on 2026-03-20 [{mallory}] [{bob}] [{carol}].",
    "Three accounts logged in to host:db01 [{mallory}] [{bob}] [{carol}].",
    "An account logged in to host:db01 at 14:30 UTC on 2026-03-20 [{xavier}] [{yuri}].",
    "An account logged in to host:db01 at 09:00 UTC on 2026-03-26 [{xavier}] [{yuri}].",
    "host:db02 had 6 outbound connections [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "host:db02 made 6 outbound connections on 2026-03-22 [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "Incident summary:",
    "# Incident summary",
    "## Timeline",
    "|---|---|---|",
    "| account:mallory | host:db01 | 2026-03-20 10:00 UTC [{mallory}] |",
    "account:dave logged in to host:db02 at 10:00 UTC on 20/03/2026 [{dave}].",
    "The disk-full alert on host:web02 had weight 0.8 [{alert}].",
]

ADVERSARIAL = [
    # facts of different observations combined
    "An account logged in to host:db01 at 14:30 UTC on 2026-03-26 [{xavier}] [{yuri}].",
    "An account logged in to host:db01 at 09:00 UTC on 2026-03-20 [{xavier}] [{yuri}].",
    "account:mallory logged in to host:db01 on 2026-03-20 at 11:00 UTC [{mallory}] [{bob}].",
    "Three accounts logged in to host:db01 on 2026-03-20 [{mallory}] [{bob}] [{carol}].",
    "Two accounts logged in to host:db01 at 10:00 UTC [{mallory}] [{bob}] [{dave}].",
    "Accounts logged in to host:db01 at 11:00 UTC on 2026-03-21 [{mallory}] [{carol}] [{bob}] [{yuri}] [{dave}].",
    "2 hosts saw logins at 14:30 UTC [{yuri}] [{dave}].",
    # a year, a member count or a wrong count read as a count
    "account:mallory logged in to host:db01 2026 times [{mallory}].",
    "host:db02 had 2 outbound connections [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "host:db02 had 3 outbound connections [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "account:mallory logged in to host:db01 twice [{mallory}].",
    "account:mallory made 3 logins [{mallory}] [{hop}].",
    "account:mallory logged in to 3 hosts [{hop}].",
    # relative and numeric dates that are wrong or ambiguous
    "account:erin logged in to host:web02 3 days ago [{erin}].",
    "account:erin logged in to host:web02 last Monday [{erin}].",
    "account:erin logged in to host:web02 on Monday [{erin}].",
    "account:mallory logged in to host:db01 4 days ago [{mallory}].",
    "account:mallory logged in to host:db01 on 21/03/2026 [{mallory}].",
    "account:mallory logged in to host:db01 on 3/21/2026 [{mallory}].",
    "account:mallory logged in to host:db01 on 20/03/2025 [{mallory}].",
    "account:mallory logged in to host:db01 on 03/04/2026 [{mallory}].",
    "account:mallory logged in to host:db01 on 32/03/2026 [{mallory}].",
    "service:billing was deployed to host:web02 yesterday [{deploy}].",
    # derived conclusions stretched
    "account:bob moved laterally [{lm}].",
    "account:mallory moved laterally to host:db01 [{lm}].",
    "account:mallory moved laterally twice [{lm}].",
    "The lateral_movement rule fired for account:bob [{lm}].",
    "account:mallory moved laterally [{mallory}].",
    # relation words and morphology that say more than the evidence
    "The deployment of service:billing to host:web02 failed [{deploy}].",
    "service:billing was rolled back on host:web02 [{deploy}].",
    "account:erin deployed service:billing [{erin}] [{deploy}].",
    "host:web02 raised an alert about account:erin [{alert}].",
    "account:erin moved laterally [{erin}].",
    # headings and table headers that assert
    "Incident summary: account:mallory deleted host:db01.",
    "# account:mallory wiped host:db01",
    "| account:mallory | deleted | host:db01 |",
    "Breach confirmed:",
    "## Attacker exfiltrated 40 GB",
]

# The reference's drones example (VerifiableMemory's verify documentation), and what must not pass beside it.
DRONES_HONEST = [
    "The two drones converged into a coordinated threat [{threat}].",
    "drone:d1 and drone:d2 converged into a coordinated threat [{threat}].",
    "The two drones converged into a coordinated threat [{step}].",
]
DRONES_ADVERSARIAL = [
    "The three drones converged into a coordinated threat [{threat}].",
    "drone:d1 and drone:d3 converged into a coordinated threat [{threat}].",
    "The two drones converged into a coordinated threat [{alone}].",  # a sighting no proof rests on
    "The two drones converged into a coordinated threat at sector:s2 [{threat}].",
    "The two drones converged into a coordinated threat [{threat}] and destroyed it.",
]

RECALL_NOW = NOW
# (query, window as (start, end) or None for no time phrase, or "refused": not understood / an error)
RECALL_PHRASES = [
    ("account:mallory yesterday", (NOW - 12 * 3_600 - DAY, NOW - 12 * 3_600)),
    ("account:mallory last 3 days", (NOW - 3 * DAY, NOW + 1)),
    ("account:mallory 3 days ago", (NOW - 12 * 3_600 - 3 * DAY, NOW - 12 * 3_600 - 2 * DAY)),
    ("account:mallory the day before yesterday", (NOW - 12 * 3_600 - 2 * DAY, NOW - 12 * 3_600 - DAY)),
    ("account:mallory since Monday", (NOW - 12 * 3_600 - 5 * DAY, NOW + 1)),
    ("account:mallory last Tuesday", (NOW - 12 * 3_600 - 4 * DAY, NOW - 12 * 3_600 - 3 * DAY)),
    ("account:mallory on March 25", (NOW - 12 * 3_600 - 3 * DAY, NOW - 12 * 3_600 - 2 * DAY)),
    ("account:mallory on March 20, 2026", (MAR20, MAR20 + DAY)),
    ("account:mallory 03/20/2026", (MAR20, MAR20 + DAY)),
    ("account:mallory 20/03/2026", (MAR20, MAR20 + DAY)),
    ("account:mallory from March 10 to March 26, 2026", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("account:mallory between 2026-03-10 and 2026-03-26", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("account:mallory", None),
    ("Mallory", None),
    ("account:bob before last week", "refused"),
    ("not yesterday", "refused"),
    ("except yesterday", "refused"),
    ("account:mallory excluding yesterday", "refused"),
    ("account:mallory 03/04/2026", "refused"),  # March 4 or April 3
    ("between 2026-03-26 and 2026-03-10", "refused"),
    ("account:mallory from March 26 to March 10, 2026", "refused"),
    ("account:mallory yesterday 10:00 PST", "refused"),
    ("account:mallory around noon", "refused"),
    ("account:mallory next week", "refused"),
    ("account:mallory in the morning", "refused"),
    ("account:mallory 2 fortnights ago", "refused"),
]


def build() -> tuple[Memory, dict[str, str]]:
    """The incident scenario and the drones example in a fresh in-memory store; the tags to fill answers with."""
    m = Memory(":memory:", actor="corpus")
    tags = {name: m.remember(members, ts, weight, label)["hedge_tag"]
            for name, (members, ts, weight, label) in OBSERVATIONS.items()}
    tags["threat"] = m.remember(["drone:d1", "drone:d2", "sector:s1"], NOW - 3_600, 0.9)["hedge_tag"]
    tags["alone"] = m.remember(["drone:d1", "drone:d2"], NOW - 7_200, 0.9)["hedge_tag"]
    m.define_rule(*LATERAL_RULE, name="lateral_movement")
    m.define_rule("coordinated_threat(S)",
                  "hedge(E, 'DRONE_EVENT', _, _), member(E, A), entity_type(A, drone), member(E, B), "
                  "entity_type(B, drone), A @< B, member(E, S), entity_type(S, sector)",
                  name="coordinated_threat", confidence=0.9)
    proofs = m.prove("", top_k=100, now=NOW)["proofs"]  # as verify proves: every conclusion, numbered alike
    for goal, key in (("lateral_movement", "lm"), ("coordinated_threat", "step")):
        tags[key] = next(n["step_tag"] for p in proofs for n in p["nodes"]
                         if n["kind"] == "conclusion" and n["fact"].startswith(goal + "("))
    return m, tags
