"""The lemma table `verify` reads relation words through: data, not code (`claims.stem` applies it).

A word and its entry's base are the same word to verify, on both sides of every comparison:
the sentence's words and the words an observation (its formation, its label) or a proved
conclusion (its predicate, its rule's name) expresses. Keep every entry a word a careful reader
would accept as meaning the same thing in a report on the evidence; a looser entry lets an
answer say more than the evidence does.

- DERIVED: derived forms the suffix rules in `claims.stem` do not reach (nouns and adverbs of
  verbs and adjectives). The suffix rules already take -ment ("deployment" is "deploy"), -ly
  ("laterally" is "lateral") and the inflections (-s, -ed, -ing).
- SYNONYMS: groups of words that say the same relation; each word of a group stands for the
  group's first word. "converged" (or "met") says what `coordinated_threat` says of drones (the
  reference's own example: "The two drones converged into a coordinated threat"), an alert
  is "raised", "fired" or "triggered" (and so is a rule: RULE_VERBS), a deployment is
  "released" or "shipped".
- PHRASAL_VERBS: a verb and its particle that mean one relation word ("showed up" is "appeared").
- LIGHT_VERBS: verbs that carry no relation of their own ("made 6 connections", "performed a
  login"): what they take ("connections", "login") must still be carried."""

DERIVED = {
    "convergence": "converge", "movement": "move", "moves": "move", "authentication": "authenticate",
    "execution": "execute", "connection": "connect", "communication": "communicate", "arrival": "arrive",
    "entry": "enter", "detection": "detect", "deployment": "deploy", "logon": "login", "signin": "login",
}

SYNONYMS = (
    ("coordinate", "converge", "meet"),
    ("alert", "alarm", "raise", "fire", "trigger"),
    ("deploy", "release", "ship", "rollout"),
)

LIGHT_VERBS = "make perform carry record register"

# Verbs with a particle, read as the one word they mean, each inflection listed: "showed up" is "appeared".
PHRASAL_VERBS = {
    **{(form, "up"): "appeared" for form in ("show", "shows", "showed", "shown", "showing", "turn", "turns", "turned",
                                             "turning", "pop", "pops", "popped")},
    **{(form, "on"): "logged" for form in ("log", "logs", "logged", "logging")},
}

# How a summary says a rule produced a conclusion ("the lateral_movement rule fired"): said of a conclusion only
# in a sentence that names a rule, so "sector:q fired at drone:x1" citing a proof step is stripped.
RULE_VERBS = "fire trigger match flag apply hold"

# Words a heading or a table's header row may consist of (besides claim-free words and entity types):
# "Incident summary:", "## Timeline", "| Account | Host | Time |". A label made of other words
# ("Breach confirmed:", "Hostile drones:") asserts something and is judged like any sentence.
HEADING_WORDS = """
incident incidents summary timeline findings finding details detail evidence observation observations conclusion
conclusions recommendation recommendations next steps step overview context background notes note key points
analysis report sources source citations citation table results result events event activity date dates time
times when where who what status count counts total totals rule rules proof proofs tag tags entity entities
member members formation weight confidence score id name names type types questions open issues answer
""".split()
