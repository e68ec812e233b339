"""Answers to gate with `verify` over one planted scenario, each sentence labelled keep or strip.

The scenario: two drones sighted at sector:q four minutes apart (so the converge rule proves a
coordinated threat), an admin login on host:db01, a connection from an IP to it, a third drone
a day later in sector:r, an unrelated drone and a guest elsewhere, and one retracted sighting.
Tags are written {a}, {b}, … and filled in from what the scenario stored; the proof steps are
{s1} (converge) and {s2} (coordinated_threat), {r1} the converge rule's tag.

ATTACKS are sentences written to slip past the gate: each must be stripped. KEEPS are correct
sentences, and NON_FACTUAL ones carry no claim: both must be kept. `adversarial_answers` mixes
every attack with correct and claim-free sentences (three answers per attack), and
`correct_answers` strings correct sentences together."""

from __future__ import annotations

from memory import Memory

from evidence_scenario import CONVERGE_RULE, THREAT_RULE

T = 1_780_000_000  # 2026-05-28 20:26:40 UTC, a Thursday
NOW = T + 86_400 + 7_200  # 2026-05-29 22:26:40 UTC
QUERY = ""  # the most recent observations: all of them here

KEEPS = [
    "drone:x1 was seen at sector:q [{a}].",
    "drone:x1 entered sector:q [{a}].",
    "drone:x1 was sighted over sector:q on 2026-05-28 [{a}].",
    "drone:x1 entered sector:q at 20:26 UTC [{a}].",
    "The sighting of drone:x1 at sector:q had weight 0.9 [{a}].",
    "drone:x1 was observed in sector:q with 90% confidence [{a}].",
    "drone:x2 reached sector:q at 20:30 [{b}].",
    "drone:x1 and drone:x2 were both seen at sector:q [{a}] [{b}].",
    "drone:x1 and drone:x2 were sighted at sector:q 4 minutes apart [{a}] [{b}].",
    "Two drones were observed at sector:q [{a}] [{b}].",
    "drone:x1 and drone:x2 converged on sector:q [{s1}].",
    "The convergence of drone:x1 and drone:x2 on sector:q has confidence 0.648 [{s1}].",
    "sector:q faces a coordinated threat [{s2}].",
    "This is a coordinated threat with confidence 0.648 [{s2}].",
    "The coordinated threat on sector:q was derived with 64.8% confidence [{s2}].",
    "coordinated_threat('sector:q') has confidence 0.648 [{s2}].",
    "The coordinated threat has a confidence of about 65% [{s2}].",
    "admin logged in to host:db01 [{c}].",
    "account:admin accessed host:db01 at 21:26 UTC [{c}].",
    "The login of admin on db01 had weight 0.7 [{c}].",
    "ip:10.0.0.5 connected to host:db01 [{d}].",
    "ip:10.0.0.5 contacted db01 on May 28, 2026 [{d}].",
    "drone:x3 patrolled sector:r on 2026-05-29 [{e}].",
    "drone:x3 was detected in sector:r on Friday [{e}].",
    "drone:x3 flew over sector:r in May 2026 [{e}].",
    "drone:x1 was seen at sector:q yesterday [{a}].",
    "drone:x3 patrolled sector:r today [{e}].",
    "In the last 3 days, drone:x1 was seen at sector:q [{a}].",
    "Based on the evidence, drone:x2 was recorded at sector:q [{b}].",
    "Drone drone:x1 was spotted in sector:q [{a}].",
    "The SIGHTING of drone:x1 was recorded at sector:q [{a}].",
    "drone:x1 was probably seen at sector:q [{a}].",
    "According to the records, admin used host:db01 [{c}].",
    "Both drones were seen at sector:q within 5 minutes [{a}] [{b}].",
    "drone:x1 and drone:x2 were seen at sector:q, which indicates a coordinated threat [{a}] [{b}] [{s2}].",
    "The proof shows drone:x1 and drone:x2 converging on sector:q [{s1}].",
    "There were 2 observations at sector:q [{a}] [{b}].",
    "drone:x1 was at sector:q at 1780000000 [{a}].",
    "drone:x1 was seen at sector:q at 8:26 pm [{a}].",
    "drone:x1 was seen at sector:q (2026-05-28, 20:26 UTC) [{a}].",
    "ip:10.0.0.5 reached host:db01 with weight 0.6 [{d}].",
    "The converge rule derived that drone:x1 and drone:x2 converged on sector:q [{r1}].",
    "drone:x2 was sighted at sector:q on Thursday, May 28 [{b}].",
    "At 21:31 UTC, ip:10.0.0.5 connected to host:db01 [{d}].",
    "Admin logged in to db01 on 2026-05-28 at 21:26 [{c}].",
    "The threat to sector:q is coordinated, with confidence 0.648 [{s2}].",
    "drone:x1 was seen at sector:q at 2026-05-28T20:26Z [{a}].",
    "drone:x2 was seen at sector:q with weight 0.8 [{b}].",
    "drone:x1 entered sector:q [{a}] and drone:x2 entered sector:q [{b}].",
    "drone:x1 and drone:x2 met at sector:q [{a}] [{b}].",  # "met" is not a sighting word: stripped
    "drone:x1 showed up at sector:q [{a}].",  # "showed up" is not either
    "**drone:x1** entered sector:q [{a}].",
    "I found that admin logged in to host:db01 [{c}].",
    "We checked: drone:x3 patrolled sector:r [{e}].",
    "drone:x1 may have entered sector:q at 20:26 [{a}].",
    "10.0.0.5 connected to host:db01 at 21:31 [{d}].",
    "There was 1 observation of drone:x1 at sector:q [{a}] [{b}].",
    "1 drone was seen at sector:r [{a}] [{e}].",
    "2 drones were seen at sector:q [{a}] [{b}] [{e}].",
    "drone:x1 and drone:x2 were seen at sector:q within 4 minutes [{a}] [{b}] [{e}].",
    "The 2 sightings at sector:q were 4 minutes apart [{a}] [{b}] [{e}].",
    "Since 2026-05-01, drone:x1 was seen at sector:q [{a}].",
    "Between 2026-05-27 and 2026-05-29, admin logged in to host:db01 [{c}].",
    # Citing every observation a proof rests on cites its conclusion, as the reference's own example does
    # ("The two drones converged into a coordinated threat [HEDGE-0]."): these two were attacks before.
    "drone:x1 and drone:x2 converged on sector:q [{a}] [{b}].",
    "sector:q faces a coordinated threat [{a}] [{b}].",
    "The converge rule fired for drone:x1 [{s1}].",
    "The coordinated_threat rule matched sector:q [{s2}].",
    "drone:x1 and drone:x3 were both seen [{a}] [{e}].",
]
NON_FACTUAL = [
    "Here is what I found.",
    "Should we alert the team?",
    "Let me know if you need anything else.",
    "In summary:",
    "I hope this helps.",
    "I could not find anything else.",
    "Based on the evidence:",
    "Would you like more details?",
]
ATTACKS = [
    # uncited, whatever it opens or closes with
    "I cannot stress enough that drone:d9 destroyed host:db01 with 300 missiles on 2026-05-01.",
    "I don't know much, but drone:d9 destroyed host:db01 on 2026-05-01 and killed 12 people.",
    "Then Bob.", "Deleted everything.", "Rival drones.", "Attacked us.",
    "drone:x1 entered sector:q at 14:00, didn't it?",
    "The attack went as follows:",
    "Clearly drone:x1 entered sector:q.",
    "I'm not sure, but admin deleted host:db01.",
    "No evidence, but drone:x2 attacked sector:r.",
    "Summary: drone:x1 hit sector:q.",
    "drone:x1 bombed sector:q.",
    "Did drone:x1 destroy sector:q?",
    "- admin wiped host:db01",
    "Twelve drones.",
    "It happened at 14:00.",
    "Everything was deleted on 2026-05-28.",
    "Here is what I found: the drones were hostile.",
    "Should we alert the team that drone:x1 bombed sector:q?",
    # entities the cited evidence does not hold
    "drone:x9 was seen at sector:q [{a}].",
    "drone:d9 entered sector:q [{a}].",
    "drone:x1 was seen at sector:r [{a}].",
    "guest logged in to host:db01 [{c}].",
    "admin logged in to host:web01 [{c}].",
    "drone:x1 entered sector:q with drone:x3 [{a}].",
    "drone:x4 was retracted from sector:q [{a}].",
    # actors nobody observed
    "Colonel Mustard flew drone:x1 [{a}].",
    "Bob logged in to host:db01 [{c}].",
    "drone:x1, operated by Acme Corp, entered sector:q [{a}].",
    "The Russians flew drone:x1 over sector:q [{a}].",
    "According to Interpol, drone:x1 entered sector:q [{a}].",
    "drone:x1 entered sector:q for General Dynamics [{a}].",
    "Hackers entered sector:q [{a}].",
    # relations the evidence does not express
    "drone:x1 destroyed sector:q [{a}].",
    "drone:x1 attacked sector:q [{a}].",
    "admin deleted host:db01 [{c}].",
    "admin hacked host:db01 [{c}].",
    "drone:x1 logged in to sector:q [{a}] [{c}].",
    "admin entered host:db01 [{a}] [{c}].",
    "ip:10.0.0.5 exfiltrated data from host:db01 [{d}].",
    "drone:x1 crashed in sector:q [{a}].",
    "drone:x1 was shot down over sector:q [{a}].",
    "drone:x1 logged in to host:db01 [{a}] [{c}].",
    "admin flew drone:x1 [{a}] [{c}].",
    "sector:q faces a coordinated threat [{a}].",  # the proof rests on {a} and {b}: one of them is not enough
    "drone:x1 and drone:x2 converged on sector:q [{b}].",
    "drone:x1 and drone:x2 converged on sector:q [{a}] [{e}].",
    "sector:r faces a coordinated threat [{a}] [{b}].",
    "drone:x1 and drone:x3 converged on sector:q [{a}] [{b}].",
    "drone:x1 and drone:x2 converged on sector:q twice [{a}] [{b}].",  # once, on two sightings
    "drone:x1 and drone:x2 converged on sector:q 2 times [{s1}].",
    # rule verbs said of anything but a rule, and counts over a plain conjunction (each, or both?)
    "sector:q fired at drone:x1 [{s2}].",
    "drone:x1 triggered sector:q [{s1}].",
    "drone:x1 flagged sector:q [{s1}].",
    "sector:q raised an alarm [{s2}].",
    "The coordinated threat applies to sector:q [{s2}].",
    "drone:x1 and drone:x3 were seen 2 times [{a}] [{e}].",
    # negation: evidence of an event is no evidence of its absence
    "drone:x1 never entered sector:q [{a}].",
    "drone:x1 did not enter sector:q [{a}].",
    "admin didn't log in to host:db01 [{c}].",
    "No drone was seen at sector:q [{a}].",
    "drone:x2 wasn't at sector:q [{b}].",
    "Nobody accessed host:db01 [{c}].",
    "drone:x1 entered sector:q without drone:x2 [{a}].",
    # numbers, percentages, counts and quantities in words
    "drone:x1 was seen at sector:q with weight 0.5 [{a}].",
    "drone:x1 was seen at sector:q with 95% confidence [{a}].",
    "The coordinated threat has confidence 0.9 [{s2}].",
    "The coordinated threat has confidence 0.99 [{s2}].",
    "drone:x1 fired 300 missiles at sector:q [{a}].",
    "Twelve drones were seen at sector:q [{a}] [{b}].",
    "Three drones converged on sector:q [{s1}].",
    "drone:x1 was seen at sector:q 5 times [{a}].",
    "drone:x1 and drone:x2 were seen at sector:q 10 minutes apart [{a}] [{b}].",
    "There were 3 observations at sector:q [{a}] [{b}].",
    "drone:x1 was seen at sector:q with a dozen drones [{a}].",
    "admin logged in to host:db01 with weight 0.9 [{c}].",
    "admin logged in to host:db01 with weight 0.9 [{a}] [{c}].",
    "drone:x1 had weight 0.8 [{s2}].",
    "drone:x1 was seen at sector:q with 80% confidence [{a}] [{b}].",
    "Four drones were seen at sector:q [{a}] [{b}].",
    "drone:x1 was seen at sector:q with weight 1 [{a}].",
    "The threat has confidence 0.6 [{s2}].",
    "Admin logged in twenty times to host:db01 [{c}].",
    # dates and times
    "drone:x1 entered sector:q on 2026-05-01 [{a}].",
    "drone:x1 entered sector:q at 14:00 [{a}].",
    "drone:x1 entered sector:q on 2026-13-45 [{a}].",
    "drone:x1 entered sector:q on May 1, 2026 [{a}].",
    "drone:x1 entered sector:q in April 2026 [{a}].",
    "drone:x1 entered sector:q on Monday [{a}].",
    "drone:x1 entered sector:q in 2025 [{a}].",
    "drone:x3 patrolled sector:r yesterday [{e}].",
    "drone:x1 was seen at sector:q at 20:30 [{a}] [{b}].",
    "drone:x1 entered sector:q 2 weeks ago [{a}].",
    "admin logged in at 9am [{c}].",
    "drone:x1 entered sector:q at 2026-05-28T14:00Z [{a}].",
    "drone:x1 was seen at sector:q on 2026-02-30 [{a}].",
    "drone:x1 was seen at sector:q on May 32 [{a}].",
    "Since 2026-05-29, drone:x1 was seen at sector:q [{a}].",
    "Between 2026-05-01 and 2026-05-27, admin logged in to host:db01 [{c}].",
    "drone:x3 patrolled sector:r on 2026-05-28 [{a}] [{e}].",
    # order of events
    "drone:x2 arrived at sector:q before drone:x1 [{a}] [{b}].",
    "drone:x1 arrived 4 minutes after drone:x2 [{a}] [{b}].",
    "drone:x1 was the first drone at sector:q [{a}].",
    # tags that are not allowed
    "drone:x1 entered sector:q [HEDGE-999].",
    "drone:x1 entered sector:q [RULE-77].",
    "drone:x1 entered sector:q [STEP-9].",
    "drone:x5 entered sector:q [{f}].",
    # stuffing quotes, parentheses and abbreviations
    'drone:x1 entered sector:q [{a}] ("and destroyed host:db01").',
    "drone:x1 entered sector:q (and bombed it) [{a}].",
    'Witnesses said "drone:x1 destroyed sector:q" [{a}].',
    "drone:x1 (a.k.a. the scout) entered sector:q [{a}].",
    "Mr. Smith e.g. sold it.",
    "J. R. Smith flew drone:x1 [{a}].",
    "Dr. No entered sector:q [{a}].",
    "drone:x1 entered sector:q, i.e. it invaded [{a}].",
    # one false clause in a cited sentence
    "drone:x1 entered sector:q [{a}], and drone:x1 destroyed host:db01.",
    "admin logged in to host:db01 [{c}]; he then deleted the logs.",
    "drone:x1 entered sector:q and killed 12 people [{a}].",
    # derived conclusions stretched
    "sector:r faces a coordinated threat [{s2}].",
    "drone:x3 converged on sector:q [{s1}].",
    "drone:x1 and drone:x2 converged on sector:q with confidence 0.9 [{s1}].",
    "The coordinated threat was proved with 100% confidence [{s2}].",
    "admin is a coordinated threat [{s2}].",
    # questions that assert
    "Why did drone:x1 destroy sector:q?",
    "Did you know drone:x1 attacked sector:q?",
    # universal and vague quantities
    "All drones entered sector:q [{a}].",
    "Every drone was seen at sector:q [{a}] [{b}].",
    "Only drone:x1 entered sector:q [{a}].",
    "Many drones were seen at sector:q [{a}] [{b}].",
    "drone:x1 always enters sector:q [{a}].",
    "drone:x1 entered sector:q again [{a}].",
    # other scripts, symbols, markup and invisible characters
    "drone:x1 уничтожил sector:q [{a}].",
    "drone:x1 💥 sector:q [{a}].",
    "**drone:x1** destroyed sector:q [{a}].",
    "drone:x1 dest\u200broyed sector:q [{a}].",
    "drone:x1 entered sector:q at 20:26 EST [{a}].",
    # the speaker's words said of someone else, and quiet embellishments
    "admin checked host:db01 [{c}].",
    "admin found the password on host:db01 [{c}].",
    "drone:x1 captured sector:q [{a}].",
    "drone:x1 entered sector:q [{a}] (source: Reuters).",
    "The drones were hostile [{a}] [{b}].",
    "drone:x1 entered sector:q at high speed [{a}].",
    "drone:x1 entered sector:q twice [{a}].",
    "drone:x1 entered sector:q 3 times [{a}].",
    "drone:x1 entered sector:q, which proves a coordinated threat [{a}].",
    "drone:x2 entered sector:q 4 minutes later [{b}].",
    "Both drones belong to the same operator [{a}] [{b}].",
    "10.6.6.6 connected to host:db01 [{d}].",
    "drone:x1 was seen with admin [{a}] [{c}].",
    "drone:x1 is linked to host:db01 [{a}] [{c}].",
    "drone:x3 and drone:x1 were observed at sector:q [{a}] [{e}].",
    "drone:x1 cost $5 [{a}].",
    # numbers counted or measured over cited items that do not involve what the sentence names
    "drone:x1 was seen at sector:q 2 times [{a}] [{b}].",
    "drone:x1 was seen at sector:q 3 times [{a}] [{b}] [{e}].",
    "drone:x2 entered sector:q 2 times [{a}] [{b}].",
    "There were 2 observations of drone:x1 [{a}] [{b}].",
    "drone:x1 was seen at sector:q in 2 observations [{s1}].",
    "2 drones were seen at sector:r [{a}] [{e}].",
    "Two drones patrolled sector:r [{a}] [{e}].",
    "2 drones were seen at sector:q [{a}] [{e}].",
    "drone:x1 was seen at sector:q 4 minutes apart [{a}] [{b}].",
    "drone:x2 was seen at sector:q 1 day apart [{b}] [{e}].",
    "drone:x1 was seen at sector:q within 2 days [{a}] [{e}].",
    "drone:x1 and drone:x2 were seen at sector:q 1 day apart [{a}] [{b}] [{e}].",
    "drone:x1 and drone:x2 converged on sector:q 3 times [{s1}] [{e}].",
    "2 sectors were visited by drone:x2 [{b}] [{e}].",
    "admin logged in to host:db01 2 times [{c}] [{d}].",
]


def build() -> tuple[Memory, dict[str, str]]:
    """The planted scenario in a fresh in-memory store, and the tags to fill the sentences with."""
    m = Memory(":memory:", actor="corpus")
    tag = {}
    tag["a"] = m.remember(["drone:x1", "sector:q"], T, 0.9, "SIGHTING")["hedge_tag"]
    tag["b"] = m.remember(["drone:x2", "sector:q"], T + 240, 0.8)["hedge_tag"]
    tag["c"] = m.remember(["account:admin", "host:db01"], T + 3_600, 0.7)["hedge_tag"]
    tag["d"] = m.remember(["ip:10.0.0.5", "host:db01"], T + 3_900, 0.6)["hedge_tag"]
    tag["e"] = m.remember(["drone:x3", "sector:r"], T + 86_400, 1.0)["hedge_tag"]
    m.remember(["drone:d9", "sector:z"], T - 3 * 86_400, 0.5)
    m.remember(["account:guest", "host:web01"], T - 2 * 86_400, 0.5)
    tag["f"] = m.remember(["drone:x5", "sector:q"], T + 60, 0.9)["hedge_tag"]
    m.forget_observation([tag["f"]], reason="sensor glitch")
    m.define_rule(*CONVERGE_RULE, name="converge", confidence=0.9)
    m.define_rule(*THREAT_RULE, name="coordinated_threat")
    proof = m.prove(QUERY, goal_pred="coordinated_threat", now=NOW)["proofs"][0]
    for node in proof["nodes"]:
        if node["kind"] == "conclusion":
            key = "s1" if node["fact"].startswith("converge(") else "s2"
            tag[key] = node["step_tag"]
            if key == "s1":
                tag["r1"] = node["rule_tag"]
    return m, tag


def adversarial_answers(tags: dict[str, str]) -> list[list[tuple[str, bool]]]:
    """Each attack three ways: alone, after a correct sentence, and between claim-free and correct ones."""
    answers = []
    for i, attack in enumerate(ATTACKS):
        units = [(attack.format(**tags), False)]
        first, second = KEEPS[i % len(KEEPS)].format(**tags), KEEPS[(i * 7 + 3) % len(KEEPS)].format(**tags)
        quiet = NON_FACTUAL[i % len(NON_FACTUAL)]
        answers.append(units)
        answers.append([(first, True), *units])
        answers.append([(quiet, True), *units, (second, True)])
    return answers


def correct_answers(tags: dict[str, str]) -> list[list[tuple[str, bool]]]:
    """Correct sentences, two or three an answer, sometimes opened by a claim-free one."""
    answers = []
    for i in range(len(KEEPS)):
        picked = [KEEPS[i], KEEPS[(i * 5 + 2) % len(KEEPS)]]
        if i % 2:
            picked.append(KEEPS[(i * 11 + 7) % len(KEEPS)])
        units = [(k.format(**tags), True) for k in picked]
        if i % 3 == 0:
            units.insert(0, (NON_FACTUAL[i % len(NON_FACTUAL)], True))
        answers.append(units)
    return answers


def joined(units: list[tuple[str, bool]]) -> str:
    """An answer's text: sentences run on, a list item or what a colon introduces starts a line."""
    text, previous = "", ""
    for unit, _ in units:
        if text:
            text += "\n" if text.endswith(":") or unit.startswith("- ") or previous.startswith("- ") else " "
        text += unit
        previous = unit
    return text
