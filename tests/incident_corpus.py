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
    "account:mallory logged in to host:db01 at 3:00 am PDT on 2026-03-20 [{mallory}].",
    "account:mallory logged in to host:db01 at 6:00 EDT [{mallory}].",
    "The coordinated_threat rule fired for sector:s1 [{step}].",
    "account:mallory showed up on host:db01 [{mallory}].",
    "account:mallory logged on to host:db01 [{mallory}].",
    "6 outbound connections were recorded from host:db02 [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "An alert was raised on host:web02 [{alert}].",
    "account:erin logged in to host:web02 on 2026-03-24 at 09:15 UTC [{erin}].",
    "account:yuri and account:mallory both logged in to host:db01 on 20/03/2026 [{yuri}] [{mallory}].",
    "Four accounts logged in to host:db01 [{mallory}] [{bob}] [{carol}] [{xavier}].",
    "account:mallory logged in to 3 hosts [{mallory}] [{hop}].",
    "host:db02 made 6 outbound connections within 1 hour [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "- account:bob logged in to host:db01 at 11:00 UTC [{bob}]",
    "1. account:carol logged in to host:db01 on 2026-03-21 [{carol}]",
    "account:mallory logged in to host:db01 8 days ago [{mallory}].",
    "account:mallory logged in to host:db01 on Friday, March 20 [{mallory}].",
    # a second round, written after the fixes: phrasings a model writing a summary uses
    "On 2026-03-20, three accounts (account:mallory, account:bob, account:yuri)"
    " logged in to host:db01 [{mallory}] [{bob}] [{yuri}].",
    "host:db02 received 6 outbound connections on 2026-03-22 [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "account:mallory authenticated to host:db01 [{mallory}].",
    "Between 10:00 and 11:00 UTC on 2026-03-20, account:mallory and account:bob"
    " logged in to host:db01 [{mallory}] [{bob}].",
    "account:mallory's login to host:db01 at 10:00 UTC [{mallory}] was recorded.",
    "The alert on host:web02 fired yesterday [{alert}].",
    "The lateral_movement rule triggered for account:mallory [{lm}].",
    "account:mallory logged in to host:db01 on March 20 at 10:00 UTC [{mallory}].",
    "account:erin accessed host:web02 on Tuesday, March 24, 2026 at 09:15 UTC [{erin}].",
    "account:mallory logged in to host:app01 and host:db02 at 02:00 UTC on 2026-03-21 [{hop}].",
    "service:billing was deployed on host:web02 on 2026-03-26 [{deploy}].",
    "Three accounts logged in to host:db01 between 10:00 and 14:30 UTC on 2026-03-20 [{mallory}] [{bob}] [{yuri}].",
    "account:xavier logged in to host:db01 2 days ago [{xavier}].",
    "account:mallory logged in to host:db01 about a week ago [{mallory}].",
    "At 10:00 UTC on 2026-03-20, account:dave logged in to host:db02 [{dave}].",
    "account:dave and account:mallory logged in at 10:00 UTC on 2026-03-20 [{dave}] [{mallory}].",
    "The disk-full alert was raised on host:web02 on 2026-03-27 [{alert}].",
    "host:db02 connected to ip:203.0.113.0 [{out0}].",
    "Yesterday, host:web02 raised an alert [{alert}].",
    "account:mallory logged in to host:db01 once, at 10:00 UTC [{mallory}].",
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
    # zones, rules, phrasal verbs, counts and spans beside the honest ones above
    "account:mallory logged in to host:db01 at 10:00 PST [{mallory}].",
    "account:mallory logged in to host:db01 at 3:00 am EST [{mallory}].",
    "The coordinated_threat rule fired for sector:s2 [{step}].",
    "account:mallory showed up on host:db02 [{mallory}].",
    "Five accounts logged in to host:db01 [{mallory}] [{bob}] [{carol}] [{xavier}].",
    "account:mallory logged in to 4 hosts [{mallory}] [{hop}].",
    "host:db02 made 6 outbound connections on 2026-03-21 [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "Two alerts were raised on host:web02 [{alert}].",
    "An alert was raised on host:db01 [{alert}].",
    "account:erin logged in to host:web02 on 2026-03-24 at 10:15 UTC [{erin}].",
    "account:yuri and account:mallory both logged in to host:db01 at 14:30 UTC [{yuri}] [{mallory}].",
    "account:mallory logged in to host:db01 on 2026-03-20 2 times [{mallory}] [{bob}].",
    "host:db02 made 6 outbound connections within 10 minutes [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "- account:bob logged in to host:db01 at 10:00 UTC [{bob}]",
    "account:carol logged in to host:db01 on 2026-03-20 [{carol}].",
    "account:mallory logged in to host:db01 last Friday [{mallory}].",
    "account:mallory logged in to host:db01 9 days ago [{mallory}].",
    # a second round, written after the fixes
    "Between 10:00 and 10:30 UTC on 2026-03-20, account:mallory and account:bob"
    " logged in to host:db01 [{mallory}] [{bob}].",
    "Three accounts logged in to host:db01 between 10:00 and 12:00 UTC on 2026-03-20 [{mallory}] [{bob}] [{yuri}].",
    "The alert on host:db01 fired yesterday [{alert}].",
    "account:mallory triggered an alert on host:db01 [{mallory}].",
    "account:mallory fired host:db01 [{mallory}].",
    "account:dave and account:mallory logged in to host:db01 at 10:00 UTC on 2026-03-20 [{dave}] [{mallory}].",
    "host:db02 received 7 outbound connections [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "account:mallory logged in to host:app01 at 03:00 UTC [{hop}].",
    "service:billing was deployed on host:web02 on 2026-03-25 [{deploy}].",
    "account:xavier logged in to host:db01 3 days ago [{xavier}].",
    "At 10:00 UTC on 2026-03-21, account:dave logged in to host:db02 [{dave}].",
    "account:mallory's movement to host:db01 [{mallory}].",
    "The deployment of service:billing caused the alert [{deploy}] [{alert}].",
    "service:billing raised an alert on host:web02 [{deploy}] [{alert}].",
    "account:erin raised an alert on host:web02 [{erin}] [{alert}].",
    "host:db02 made 6 outbound connections to ip:203.0.113.9 [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "host:db02 made 6 outbound connections in 5 minutes [{out0}] [{out1}] [{out2}] [{out3}] [{out4}] [{out5}].",
    "account:mallory logged in to host:db01 at 10:00 CET [{mallory}].",
    "account:mallory moved laterally on 2026-03-22 [{lm}].",
    "account:mallory moved laterally to host:web02 [{lm}] [{erin}].",
    "# Incident summary: account:mallory exfiltrated data",
    "Summary of the breach:",
    "account:mallory logged in to host:db01 on 2026-03-20 between 11:00 and 12:00 UTC [{mallory}].",
    "account:mallory logged in to host:db01 on the 20th at 10:00 UTC, twice [{mallory}].",
]

# A summary as a model writes one: a heading, bullets, a table with its header; every line honest.
SUMMARY = """Incident summary:
- account:mallory logged in to host:db01 on 2026-03-20 at 10:00 UTC [{mallory}].
- account:mallory moved laterally from host:app01 to host:db02 [{lm}].
- host:db02 made 6 outbound connections on 2026-03-22 SIX.

## Timeline
| Account | Host | Time |
|---|---|---|
| account:bob | host:db01 | 2026-03-20 11:00 UTC [{bob}] |
| account:carol | host:db01 | 2026-03-21 10:00 UTC [{carol}] |

The lateral_movement rule fired for account:mallory [{lm}].""".replace("SIX", "[{out0}] [{out1}] [{out2}] [{out3}] "
                                                                      "[{out4}] [{out5}]")

# The reference's drones example (VerifiableMemory's verify documentation), and what must not pass beside it.
DRONES_HONEST = [
    "The two drones converged into a coordinated threat [{threat}].",
    "drone:d1 and drone:d2 converged into a coordinated threat [{threat}].",
    "The two drones converged into a coordinated threat [{step}].",
    "The two drones converged once [{threat}].",
]
DRONES_ADVERSARIAL = [
    "The three drones converged into a coordinated threat [{threat}].",
    "drone:d1 and drone:d3 converged into a coordinated threat [{threat}].",
    "The two drones converged into a coordinated threat [{alone}].",  # a sighting no proof rests on
    "The two drones converged into a coordinated threat at sector:s2 [{threat}].",
    "The two drones converged into a coordinated threat [{threat}] and destroyed it.",
    "The two drones converged twice [{threat}].",
    "The two drones converged into a coordinated threat 2 times [{step}].",
]

RECALL_NOW = NOW
TODAY = NOW - 12 * 3_600  # 2026-03-28T00:00:00Z
HOUR, WEEK = 3_600, 7 * DAY
REFUSED = "refused"
# Time phrases and what each must mean: a window (start, end), or REFUSED (an error, or recall abstaining
# because it did not understand the phrase); never anything else. Each is asked alone and after an entity.
TIME_PHRASES = [
    ("today", (TODAY, TODAY + DAY)),
    ("yesterday", (TODAY - DAY, TODAY)),
    ("the day before yesterday", (TODAY - 2 * DAY, TODAY - DAY)),
    ("day before yesterday", (TODAY - 2 * DAY, TODAY - DAY)),
    ("last 3 days", (NOW - 3 * DAY, NOW + 1)),
    ("past 24 hours", (NOW - DAY, NOW + 1)),
    ("last week", (NOW - WEEK, NOW + 1)),
    ("last 2 weeks", (NOW - 2 * WEEK, NOW + 1)),
    ("past hour", (NOW - HOUR, NOW + 1)),
    ("previous 10 minutes", (NOW - 600, NOW + 1)),
    ("3 days ago", (TODAY - 3 * DAY, TODAY - 2 * DAY)),
    ("a day ago", (TODAY - DAY, TODAY)),
    ("1 day ago", (TODAY - DAY, TODAY)),
    ("2 hours ago", (NOW - 2 * HOUR - HOUR // 2, NOW - 2 * HOUR + HOUR // 2)),
    ("an hour ago", (NOW - HOUR - HOUR // 2, NOW - HOUR // 2)),
    ("1 week ago", (NOW - WEEK - WEEK // 2, NOW - WEEK // 2)),
    ("since Monday", (TODAY - 5 * DAY, NOW + 1)),
    ("since Tuesday", (TODAY - 4 * DAY, NOW + 1)),
    ("since Saturday", (TODAY, NOW + 1)),
    ("on Thursday", (TODAY - 2 * DAY, TODAY - DAY)),
    ("last Tuesday", (TODAY - 4 * DAY, TODAY - 3 * DAY)),
    ("last Saturday", (TODAY - 7 * DAY, TODAY - 6 * DAY)),
    ("before Monday", (None, TODAY - 5 * DAY)),
    ("on March 25", (MAR20 + 5 * DAY, MAR20 + 6 * DAY)),
    ("on March 25, 2026", (MAR20 + 5 * DAY, MAR20 + 6 * DAY)),
    ("on 25 March 2026", (MAR20 + 5 * DAY, MAR20 + 6 * DAY)),
    ("on Mar 25", (MAR20 + 5 * DAY, MAR20 + 6 * DAY)),
    ("since March 20", (MAR20, NOW + 1)),
    ("since 2026-03-20", (MAR20, NOW + 1)),
    ("after 2026-03-20", (MAR20 + DAY, NOW + 1)),
    ("before 2026-03-20", (None, MAR20)),
    ("until 2026-03-20", (None, MAR20 + DAY)),
    ("on 2026-03-20", (MAR20, MAR20 + DAY)),
    ("2026-03-20", (MAR20, MAR20 + DAY)),
    ("03/20/2026", (MAR20, MAR20 + DAY)),
    ("3/20/2026", (MAR20, MAR20 + DAY)),
    ("20/03/2026", (MAR20, MAR20 + DAY)),
    ("20/3/2026", (MAR20, MAR20 + DAY)),
    ("from March 10 to March 26, 2026", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("from 2026-03-10 to 2026-03-26", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("between 2026-03-10 and 2026-03-26", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("between March 10 and March 26, 2026", (MAR20 - 10 * DAY, MAR20 + 7 * DAY)),
    ("in March 2026", (MAR20 - 19 * DAY, MAR20 + 12 * DAY)),
    ("in March", (MAR20 - 19 * DAY, MAR20 + 12 * DAY)),
    ("during 2026", (1_767_225_600, 1_798_761_600)),
    ("since 2026-03-20 10:00 UTC", (MAR20 + 10 * HOUR, NOW + 1)),
    ("since 2026-03-20 10:00 PST", (MAR20 + 18 * HOUR, NOW + 1)),
    ("since 2026-03-20T10:00Z", (MAR20 + 10 * HOUR, NOW + 1)),
    ("since 2026-03-20T10:00+02:00", (MAR20 + 8 * HOUR, NOW + 1)),
    ("since 2026-03-20 10:00 America/Los_Angeles", (MAR20 + 17 * HOUR, NOW + 1)),  # summer time: UTC-7
    ("since 2026-03-20 10:00 Europe/Berlin", (MAR20 + 9 * HOUR, NOW + 1)),
    ("since 2026-03-20 10:00 Mars/Olympus", REFUSED),
    ("at 1774000800", (1_774_000_800, 1_774_000_801)),
    ("before last week", REFUSED),
    ("not yesterday", REFUSED),
    ("except yesterday", REFUSED),
    ("excluding yesterday", REFUSED),
    ("other than today", REFUSED),
    ("outside business hours", REFUSED),
    ("not in March", REFUSED),
    ("03/04/2026", REFUSED),  # March 4 or April 3
    ("32/03/2026", REFUSED),
    ("between 2026-03-26 and 2026-03-10", REFUSED),
    ("from March 26 to March 10, 2026", REFUSED),
    ("yesterday 10:00 PST", REFUSED),
    ("around noon", REFUSED),
    ("next week", REFUSED),
    ("in the morning", REFUSED),
    ("2 fortnights ago", REFUSED),
    ("tomorrow", REFUSED),
    ("tonight", REFUSED),
    ("this weekend", REFUSED),
    ("last night", REFUSED),
    ("at 10am", REFUSED),
    ("since forever", REFUSED),
    ("on the 3rd", REFUSED),
    ("in Q1 2026", REFUSED),
    ("since 2026-02-30", REFUSED),
    ("last 0 days", REFUSED),
    ("early March", REFUSED),
    ("mid-2025", REFUSED),
    ("a while ago", REFUSED),
    ("at 14:30", REFUSED),
    ("yesterday or today", REFUSED),  # phrases intersect: this one has no moment in common
    ("since 2026-03-25 before 2026-03-20", REFUSED),
    ("since last Monday", REFUSED),
    ("3 days before yesterday", REFUSED),
    ("the week before last", REFUSED),
    ("not in the last 3 days", REFUSED),
    ("before yesterday", (None, TODAY - DAY)),
    ("after yesterday", (TODAY, NOW + 1)),
    ("between yesterday and today", (TODAY - DAY, TODAY + DAY)),
    ("in the last 3 days", (NOW - 3 * DAY, NOW + 1)),
]
RECALL_PHRASES = [(phrase, expected) for phrase, expected in TIME_PHRASES] + \
    [(f"account:mallory {phrase}", expected) for phrase, expected in TIME_PHRASES] + \
    [("account:mallory", None), ("Mallory", None), ("host:db01 logins", None)]


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
