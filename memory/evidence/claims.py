"""What a sentence claims, read deterministically with a closed vocabulary: the claim model of `verify`.

A sentence is read into:
- entities: `type:id` names and bare words naming a stored entity ("admin" for account:admin);
- types: words naming an entity type ("drones");
- numbers, each with its role: a percentage (80 % is 0.8), a count of a type ("2 drones") or of
  observations ("3 observations", "6 outbound connections", "once", "twice"), a duration ("4 minutes apart"), or a plain value (a weight, a
  confidence, a timestamp); quantities written as words ("twelve", "a dozen") are numbers too;
- moments: dates and times (ISO, "May 3, 2026", "14:00 UTC", "10:00 PST", "2pm", "between 10:00
  and 11:00 UTC", weekdays, bare years (not before a count word: "2026 times" is a count), and
  recall's window phrases such as "yesterday", "4 days ago", "last Tuesday", "20/03/2026", "in
  May 2026", "since …");
- relation words: the verbs and nouns that say what happened ("entered", "logged", "converged"),
  which the cited evidence must express (see RELATIONS and `words_of`);
- negation ("not", "never", "no", "-n't", …): evidence records what happened, never what did not;
- unknown words: everything else. A capitalized one is reported as an unknown name (an actor the
  evidence does not know), any other as a word the evidence cannot carry. verify strips on both:
  the vocabulary is closed on purpose, so that a claim the gate cannot check is never kept.

Words that carry no claim (FUNCTION, META, HEDGING) are allowed anywhere. A sentence is
non-factual, and kept without a citation, only when it has no entity, type, number, moment,
capitalized name or negation-free claim word at all: "Here is what I found." is, "Deleted
everything." is not. A question is non-factual when it asks the user something (opens with
should, would, do you, …) in the same claim-free words plus ASKING."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from ..errors import InvalidArguments
from ..store.repository import Transaction
from .recall import TYPED, known_names, typed_tokens
from .sentences import TAG, strip_list_marker
from .lexicon import DERIVED, LIGHT_VERBS, PHRASAL_VERBS, RULE_VERBS, SYNONYMS
from .timewindow import MONTH, MONTHS, ZONES, next_window

FUNCTION = frozenset("""
a an the and or but also both either as at in on of to into onto from by with within for about near over under
between during through across via is are was were be been being am has have had having do does did done it its
they them their theirs he she him his her hers we our us you your i me my mine this that these those there here
which who whom whose what when where while whereas so thus therefore hence s if whether because
""".split())
# Words about the answer itself: no claim about the world.
META = frozenset("""
here what below following follows summary answer answers based evidence memory records cited citation citations
tag tags source sources according okay ok thanks thank hello hi hey please note unclear above listed result
results query question questions my best finding findings overview analysis report
""".split())
# The speaker's own acts: claim-free after "I" or "we" ("I found that …"), or in a sentence with no claim at all;
# said of anything else they are claims ("admin checked host:db01") and must be carried like any relation.
SPEECH = frozenset("""
found find know let need anything else hope helps help sure could can cannot couldn unable more information
enough see searched checked looked verified verify
""".split())
HEDGING = frozenset("likely probably possibly apparently may might seems seem appears appear would".split())
NEGATION = frozenset("not no never none nobody nothing neither nor without cannot nowhere".split())
ASKING = frozenset("""should shall would could can do does will want like alert team escalate investigate check look
further details dig deeper continue proceed review need help else anything me us we you further more""".split())
QUESTION_OPENERS = frozenset("should shall would could can do will may what which how where when why who".split())
# Words valid for any observation: it was observed, and it is an observation.
GENERIC = ("observe observation see saw seen record note appear present involve link associate event activity "
           "active show register member entity weight confidence score timestamp time value utc "
           "gmt z " + LIGHT_VERBS)
# The relation each structural formation expresses, in words (base forms; inflections are matched by stem).
RELATIONS = {
    "DRONE_EVENT": "enter entry fly flew flown visit patrol sight sighting spot detect pass cross reach arrive "
                   "arrival hover locate location position over above inside move operate track drone",
    "AUTH_EVENT": "log logged login logon sign signin authenticate authentication access connect connection "
                  "session use onto auth",
    "NETWORK_EVENT": "connect connection contact communicate communication talk traffic call reach send receive "
                     "flow network",
    "PROCESS_EVENT": "run ran execute execution start launch spawn process",
    "FILE_EVENT": "access open read touch use file",
}
# Words a proof expresses: what its conclusions mean, said of the conclusion only.
PROOF = ("derive conclude conclusion prove proof proven infer inference indicate suggest mean imply rule step face "
         "pose represent constitute")
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
NUMBER_WORDS.update({w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety"
                                                            .split())})
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12}
DURATIONS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3_600, "day": 86_400, "week": 604_800}
MAX_WINDOWS = 16
# Nouns that count events: "3 logins", "6 outbound connections", "2 alerts" (each cited observation is one).
COUNTED = frozenset("observation event record sighting login time occurrence connection alert deployment attempt "
                    "session hop request access visit entry".split())
# Counts written as a word: "once" is one observation.
TIMES = {"once": 1, "twice": 2, "thrice": 3}
APART = frozenset("apart".split())
ORDERING = frozenset("after before later earlier first last then previously subsequently next".split())
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
IRREGULAR = {"saw": "see", "seen": "see", "flew": "fly", "flown": "fly", "flies": "fly", "ran": "run",
             "met": "meet", "sent": "send", "went": "go", "gone": "go", "came": "come", "took": "take",
             "taken": "take", "began": "begin", "begun": "begin", "wrote": "write", "written": "write",
             "got": "get", "did": "do", "done": "do", "left": "leave", "led": "lead", "spoke": "speak",
             "logins": "login", "read": "read", "made": "make"}

_ISO_MOMENT = re.compile(r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?)?"
                         r"(?![\w-])")
_ZONE_NAMES = "|".join(sorted(ZONES, key=len, reverse=True))
# A zone after a time of day: a name ("10:00 PST" is 18:00 UTC; none means UTC), a name with an offset ("UTC-5",
# "GMT+05:30", "(UTC-5)") or an offset of its own ("-0500", "+05:00"). Each group name ends with the pattern's
# own suffix, as a pattern may hold the zone twice.
_SIGN = "[+\u2212\u2013-]"  # plus, minus sign, en dash, hyphen


def _zone(suffix: str) -> str:
    return (rf"(?:\s*\(?\s*(?P<name{suffix}>{_ZONE_NAMES})\b(?:\s*(?P<by{suffix}>{_SIGN}\d{{1,2}}(?::?\d{{2}})?)"
            rf"(?!\d))?\s*\)?|\s*(?<=\s)(?P<alone{suffix}>{_SIGN}\d{{2}}:?\d{{2}})(?![\w:]))?")


_CLOCK = re.compile(rf"(?<![\w:.])(\d{{1,2}})(?::(\d{{2}}))(?::(\d{{2}}))?\s*(am|pm|a\.m\.|p\.m\.)?{_zone('a')}"
                    rf"(?![\w:])|(?<![\w:.])(\d{{1,2}})\s*(am|pm|a\.m\.|p\.m\.)(?!\w){_zone('b')}", re.I)
_CLOCK_RANGE = re.compile(rf"\b(?:between|from)\s+(\d{{1,2}}):(\d{{2}})\s*(am|pm)?\s+(?:and|to|until|-)\s+(\d{{1,2}}):"
                          rf"(\d{{2}})\s*(am|pm)?{_zone('r')}(?![\w:])", re.I)


def _zone_hours(match: re.Match, suffix: str) -> float | None:
    """The zone's offset from UTC in hours (0 when none is written); None when it is no real zone (an offset
    beyond 14 hours, a named zone with an offset of its own)."""
    name = (match.group(f"name{suffix}") or "utc").lower()
    offset = match.group(f"by{suffix}") or match.group(f"alone{suffix}")
    if offset is None:
        return ZONES[name]
    if ZONES[name] != 0:
        return None  # "PST-5": two zones in one
    digits = offset[1:].replace(":", "")
    hours, minutes = (int(digits), 0) if len(digits) <= 2 else (int(digits[:-2]), int(digits[-2:]))
    if hours > 14 or minutes > 59:
        return None
    return (-1 if offset[0] != "+" else 1) * (hours + minutes / 60)
_MONTH_DAY = re.compile(rf"\b({MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s+\d{{4}})|\b(\d{{1,2}})(?:st|nd|rd|th)?"
                        rf"\s+(?:of\s+)?({MONTH})\b(?!\.?,?\s+\d{{4}})", re.I)
_YEAR = re.compile(r"(?<![\w.:-])(1[89]\d\d|2[01]\d\d)(?![\w.:%-])")
_NUMBER = re.compile(r"(?<![\w.:])(?<![\w.:][\u2212-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:-]|\.\d)(\s*%|\s+per\s*cent\b|\s+percent\b)?",
                     re.I)
# A word in any script (a claim in Cyrillic is still a claim); a name may hold digits (db01) and joins.
_WORD = re.compile(r"[^\W\d_][\w'’]*(?:-\w+)*")
_MARKUP = re.compile(r"[*`~]+")  # markdown emphasis and code marks say nothing
_DOTTED = re.compile(r"(?<![\w.:-])\d+(?:\.\d+){2,}(?:/\d+)?(?![\w-]|\.\d)")
PHRASAL = {(verb, particle): word for (verb, particle), word in PHRASAL_VERBS.items()}
_PHRASAL = re.compile(r"\b(" + "|".join(sorted({v for v, _ in PHRASAL}, key=len, reverse=True)) + r")\s+("
                      + "|".join(sorted({p for _, p in PHRASAL})) + r")\b", re.I)
_ABBREVIATIONS = re.compile(r"(?<!\w)(?:a\.k\.a|e\.g|i\.e|etc|viz|cf)\.", re.I)  # say nothing themselves


def stem(word: str) -> str:
    """A crude, consistent stem: the same for a word's inflections, derived forms and synonyms (the lemma
    table in `lexicon`), used on both sides of every comparison."""
    root = _stem(word)
    return _SYNONYM_STEMS.get(root, root)


def _stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    w = w[:-2] if w.endswith("'s") else w
    w = IRREGULAR.get(w, w)
    w = DERIVED.get(w, w)
    if len(w) > 4 and w.endswith(("ies", "ied")):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ings"):
        w = w[:-4]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 3 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    w = DERIVED.get(w, w)  # "connections" is "connection" now
    if len(w) > 6 and w.endswith(("ence", "ance")):
        w = w[:-4]
    if len(w) > 7 and w.endswith("ment"):  # deployment, movement
        w = w[:-4]
    elif len(w) > 6 and w.endswith("ly"):  # laterally
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeious":
        w = w[:-1]
    if len(w) > 2 and w.endswith("e"):
        w = w[:-1]
    return w


def stems(text: str) -> set[str]:
    """Stems of the words in a name or label ("coordinated_threat", "DRONE_EVENT", "rule:converge")."""
    return {stem(w) for w in re.split(r"[^A-Za-z]+", text) if w}


_SYNONYM_STEMS = {_stem(word): _stem(group[0]) for group in SYNONYMS for word in group}
GENERIC_STEMS = stems(GENERIC)
RELATION_STEMS = {formation: stems(words) for formation, words in RELATIONS.items()}
PROOF_STEMS = stems(PROOF)
# How a summary says a rule produced a conclusion ("the lateral_movement rule fired"): said of a conclusion only in a
# sentence about a rule, since "sector:q fired at drone:x1" is no rule's doing.
RULE_VERB_STEMS = stems(RULE_VERBS)
RULE_STEM = stem("rule")
COUNTED_STEMS = {stem(w) for w in COUNTED}
CLAIM_FREE = FUNCTION | META | HEDGING | SPEECH


@dataclass
class Moment:
    """A date or time the sentence states, as a test on an event's timestamp."""

    text: str
    kind: str  # window (a day, a month, …), second, minute, clock (time of day), clock_range, month_day, weekday,
    # year
    value: object

    def holds(self, ts: int) -> bool:
        t = datetime.fromtimestamp(ts, timezone.utc)
        if self.kind == "window":
            return self.value.contains(ts)
        if self.kind == "second":
            return ts == self.value
        if self.kind == "minute":
            return ts - ts % 60 == self.value
        if self.kind == "clock":
            hour, minute, second = self.value
            return (t.hour, t.minute) == (hour, minute) and (second is None or t.second == second)
        if self.kind == "clock_range":  # minutes of the UTC day, both ends included; it may wrap past midnight
            start, end = self.value
            minute = t.hour * 60 + t.minute
            return start <= minute <= end if start <= end else minute >= start or minute <= end
        if self.kind == "month_day":
            return (t.month, t.day) == self.value
        if self.kind == "weekday":
            return t.weekday() == self.value
        if self.kind == "year":
            return t.year == self.value
        raise ValueError(self.kind)


@dataclass
class Number:
    text: str
    value: float
    decimals: int
    role: str  # value, percent, count, observations, duration, within
    unit: str | None = None  # the type counted, or the duration's seconds

    def matches(self, value: float) -> bool:
        """Whether an evidence value is this number as written: exactly, or rounded to its precision (two
        decimals or more, or a percentage: 65 % for 0.648)."""
        written = self.value
        actual = value * 100 if self.role == "percent" else value
        if abs(actual - written) < 1e-9:
            return True
        precision = self.decimals if self.role != "percent" else self.decimals + 2
        return precision >= 2 and round(actual, self.decimals) == round(written, self.decimals)


@dataclass
class Claim:
    text: str
    entities: set[str] = field(default_factory=set)  # lower-cased names (type:id, or a bare name)
    types: set[str] = field(default_factory=set)
    numbers: list[Number] = field(default_factory=list)
    moments: list[Moment] = field(default_factory=list)
    relations: dict[str, str] = field(default_factory=dict)  # stem -> the word as written
    negation: str | None = None
    unknown_names: list[str] = field(default_factory=list)
    ordering: str | None = None
    invalid: str | None = None  # an impossible date, say
    claim_words: bool = False  # any word beyond the claim-free ones (FUNCTION, META, HEDGING, SPEECH)

    @property
    def is_factual(self) -> bool:
        return bool(self.entities or self.types or self.numbers or self.moments or self.relations
                    or self.unknown_names or self.ordering or self.invalid or self.claim_words)


def _number_words(words: list[str]) -> tuple[float | None, int]:
    """A quantity written in words at the start of `words` ("twelve", "a dozen", "three hundred"):
    (value, words used), or (None, 0)."""
    lows = [w.lower() for w in words]
    if len(lows) > 1 and lows[0] == "a" and lows[1] in SCALES:
        return float(SCALES[lows[1]]), 2
    total, current, used = 0, 0, 0
    for i, low in enumerate(lows):
        if low in NUMBER_WORDS:
            current += NUMBER_WORDS[low]
        elif low in SCALES and used:
            current *= SCALES[low]
            if SCALES[low] >= 1_000:
                total, current = total + current, 0
        elif low == "dozen":
            current = 12
        else:
            break
        used = i + 1
    return (float(total + current), used) if used else (None, 0)


def _moments(text: str, now: int, claim: Claim, types: set[str]) -> str:
    """Dates and times out of the text into the claim; the text without them."""
    def cut(match: re.Match) -> str:
        return " " * (match.end() - match.start())

    def iso(match: re.Match) -> str:
        year, month, day, hour, minute, second, zone = match.groups()
        try:
            moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0),
                              tzinfo=timezone.utc)
        except ValueError:
            claim.invalid = claim.invalid or f"{match.group(0)} is not a real date"
            return cut(match)
        if hour is None:
            return match.group(0)  # a day: a window phrase ("on 2026-05-28", "since 2026-05-01") reads it
        if zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        claim.moments.append(Moment(match.group(0), "second" if second else "minute", int(moment.timestamp())))
        return cut(match)

    text = _ISO_MOMENT.sub(iso, text)
    if claim.invalid:
        return text
    for _ in range(MAX_WINDOWS + 1):  # recall's window phrases: yesterday, last 3 days, in May 2026, since …
        try:
            window, rest = next_window(text, now)
        except InvalidArguments as error:  # an impossible or two-way date says why
            claim.invalid = str(error)
            return text
        except (ValueError, OverflowError):
            claim.invalid = "a date in it is not a real date"
            return text
        if window is None:
            break
        claim.moments.append(Moment(window.text, "window", window))
        text = rest
    else:  # each phrase costs a scan of the sentence: a sentence stuffed with them is not read, and not kept
        claim.invalid = f"more than {MAX_WINDOWS} time phrases in one sentence"

    def clock(match: re.Match) -> str:
        hour = int(match.group(1) or match.group(8))  # 5-7 and 10-12: the zones' named groups
        minute = int(match.group(2) or 0)
        second = int(match.group(3)) if match.group(3) else None
        half = (match.group(4) or match.group(9) or "").lower().replace(".", "")
        zone = _zone_hours(match, "a" if match.group(1) else "b")
        if half and not 1 <= hour <= 12 or hour > 23 or minute > 59 or (second or 0) > 59 or zone is None:
            claim.invalid = f"{match.group(0).strip()} is not a real time"
            return cut(match)
        hour = hour % 12 + (12 if half == "pm" else 0) if half else hour
        hour, minute = divmod(int(hour * 60 + minute - zone * 60) % 1440, 60)  # as UTC
        claim.moments.append(Moment(match.group(0).strip(), "clock", (hour, minute, second)))
        return cut(match)

    def clock_range(match: re.Match) -> str:
        ends = []
        zone = _zone_hours(match, "r")
        if zone is None:
            claim.invalid = f"{match.group(0).strip()} is not a real time"
            return cut(match)
        for hour, minute, half in ((match.group(1), match.group(2), match.group(3)),
                                   (match.group(4), match.group(5), match.group(6))):
            hour, minute, half = int(hour), int(minute), (half or "").lower()
            if half and not 1 <= hour <= 12 or hour > 23 or minute > 59:
                claim.invalid = f"{match.group(0).strip()} is not a real time"
                return cut(match)
            hour = hour % 12 + (12 if half == "pm" else 0) if half else hour
            ends.append(int(hour * 60 + minute - zone * 60) % 1440)
        claim.moments.append(Moment(match.group(0).strip(), "clock_range", tuple(ends)))
        return cut(match)

    text = _CLOCK_RANGE.sub(clock_range, text)  # "between 10:00 and 11:00 UTC": one moment, not two
    text = _CLOCK.sub(clock, text)

    def month_day(match: re.Match) -> str:
        month, day = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
        if month.lower() == "may" and not month[0].isupper():
            return match.group(0)  # the verb
        number = MONTHS[month.lower().rstrip(".")]
        if not 1 <= int(day) <= (29 if number == 2 else 30 if number in (4, 6, 9, 11) else 31):
            claim.invalid = f"{match.group(0)} is not a real date"
        else:
            claim.moments.append(Moment(match.group(0), "month_day", (number, int(day))))
        return cut(match)

    text = _MONTH_DAY.sub(month_day, text)

    def year(match: re.Match) -> str:
        following = re.match(r"\s+([^\W\d_]+)", text[match.end():])
        if following and _counts(following.group(1), types):
            return match.group(0)  # "2026 times", "2026 accounts": a count, never the year
        claim.moments.append(Moment(match.group(0), "year", int(match.group(1))))
        return cut(match)

    return _YEAR.sub(year, text)


def _counts(word: str, types: set[str]) -> bool:
    """Whether a word after a number makes it a count: of a type ("accounts") or of events ("times")."""
    low = word.lower()
    return stem(low) in COUNTED_STEMS or any(k in types for k in (low, low[:-1], low[:-2]))


class Names:
    """Stored entity names that bare words name ("admin" for account:admin), looked up once per word."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx
        self.cache: dict[str, set[str]] = {}

    def of(self, words: list[str]) -> set[str]:
        missing = [w for w in dict.fromkeys(words) if w not in self.cache]
        if missing:
            for w in missing:
                self.cache[w] = set()
            for name in known_names(self.tx, missing):
                low = name.lower()
                for key in {low, low.split(":", 1)[-1]}:
                    if key in self.cache:
                        self.cache[key].add(low)
        return set().union(*(self.cache[w] for w in words)) if words else set()


def _phrasal(match: re.Match) -> str:
    return PHRASAL[(match.group(1).lower(), match.group(2).lower())]


# "GMT-05:00" is written like a type:id name; it is a zone, which the time before it reads.
_ZONE_OFFSET = re.compile(rf"(?:utc|gmt|z){_SIGN}\d{{1,2}}:\d{{2}}[.!?:]*$", re.I)


def _unless_zone(match: re.Match) -> str:
    return match.group(0) if _ZONE_OFFSET.match(match.group(0)) else " "


def read_claim(names: Names, sentence: str, now: int, types: set[str]) -> Claim:
    """The claim a sentence makes (citation tags and a list marker removed first)."""
    text = _MARKUP.sub(" ", _ABBREVIATIONS.sub(" ", TAG.sub(" ", strip_list_marker(sentence))))
    text = _PHRASAL.sub(_phrasal, text)  # "showed up" is "appeared"
    claim = Claim(sentence)
    symbols = [ch for ch in text if unicodedata.category(ch) in ("So", "Sc")]  # 💥 or $ asserts like a word
    if symbols:
        claim.claim_words = True
        claim.relations.setdefault(symbols[0], symbols[0])
    claim.entities = {t.lower() for t in typed_tokens(text) if not _ZONE_OFFSET.match(t)}
    text = _moments(TYPED.sub(_unless_zone, text), now, claim, types)
    claim.entities |= set(_DOTTED.findall(text))  # 10.0.0.5 names ip:10.0.0.5; it is no number
    text = _DOTTED.sub(" ", text)
    tokens: list[object] = []  # words (str) and numbers (Number), in order
    position = 0
    for found in _NUMBER.finditer(text):
        tokens += _WORD.findall(text[position:found.start()])
        digits, fraction, percent = found.group(1).replace(",", ""), found.group(2) or "", found.group(3)
        tokens.append(Number(found.group(0).strip(), float(digits + fraction), max(0, len(fraction) - 1),
                             "percent" if percent else "value"))
        position = found.end()
    tokens += _WORD.findall(text[position:])
    words = [t.lower() for t in tokens if isinstance(t, str)]
    if words in (["yes"], ["no"]):  # a bare answer to a question is a claim
        claim.claim_words = True
    lookup = [w for w in words if w not in CLAIM_FREE and w not in NEGATION]
    known = names.of(lookup)
    local = {k.split(":", 1)[-1] for k in known} | known
    i, previous, speaker, spoken = 0, "", False, []
    while i < len(tokens):
        token = tokens[i]
        run = []
        for t in tokens[i:i + 8]:  # a quantity in words is a few words long
            if not isinstance(t, str):
                break
            run.append(t)
        quantity, used = _number_words(run)
        if quantity is not None:
            tokens[i:i + used] = [Number(" ".join(run[:used]), quantity, 0, "value")]
            continue
        if isinstance(token, str) and token.lower() in TIMES:  # "once": one observation
            tokens[i] = Number(token, float(TIMES[token.lower()]), 0, "observations")
            claim.numbers.append(tokens[i])
            i += 1
            continue
        if isinstance(token, Number):
            claim.numbers.append(token)
            after = []
            for t in tokens[i + 1:i + 4]:
                if not isinstance(t, str):
                    break
                after.append(t)
            i += 1 + _role(token, previous, after, types, claim)
            previous = ""
            continue
        low = token.lower()
        speaker = low in ("i", "we") or (speaker and low in SPEECH | HEDGING | NEGATION | {"have", "to", "also"})
        if low in SPEECH and not speaker:
            spoken.append(token)
        else:
            _classify(token, claim, known, local, types, i == 0)
        previous = low
        i += 1
    if claim.is_factual:  # beside a claim, "checked" or "found" said of someone is a claim too
        for word in spoken:
            claim.claim_words = True
            claim.relations.setdefault(stem(word), word)
    return claim


def _role(number: Number, previous: str, following: list[str], types: set[str], claim: Claim) -> int:
    """What a number counts or measures, from the words around it; how many following words that used."""
    if number.role == "percent" or not following:
        return 0
    word = following[0].lower()
    singular = word[:-1] if word.endswith("s") else word
    kind = next((k for k in (word, singular, word[:-2]) if k in types), None)
    if kind is not None:
        number.role, number.unit = "count", kind
        claim.types.add(kind)
        return 1
    if stem(word) in COUNTED_STEMS:
        number.role = "observations"
        return 1
    if len(following) > 1 and stem(following[1]) in COUNTED_STEMS and word not in DURATIONS:
        number.role = "observations"  # "6 outbound connections": the describing word is a relation word too
        return 0
    if singular in DURATIONS:
        number.role, number.unit = ("within" if previous == "within" else "duration"), DURATIONS[singular]
        number.text += " " + following[0]
        if len(following) > 1 and following[1].lower() in APART:
            return 2
        if len(following) > 1 and following[1].lower() in ORDERING:
            claim.ordering = following[1]
            return 2
        return 1
    return 0


def _classify(word: str, claim: Claim, known: set[str], local: set[str], types: set[str], first: bool) -> None:
    low = word.lower().replace("’", "'").strip("'")
    if low.endswith("n't") or low in NEGATION:
        claim.negation = claim.negation or word
        return
    base = low[:-2] if low.endswith("'s") else low
    if base in CLAIM_FREE or base == "i":
        return
    if base in known or base in local:
        claim.entities.add(base)
        return
    parts = [p for p in re.split(r"[^a-z]+", base) if p]
    if len(parts) != 1 or parts[0] != base:  # coordinated_threat, co-occurred, x1: judged by their letters
        if not parts:
            claim.claim_words = True
            claim.relations.setdefault(base, word)
        for part in parts:
            _classify(part if word[0].islower() else part.capitalize() if part == parts[0] else part, claim,
                      known, local, types, first and part == parts[0])
        return
    singular = base[:-1] if base.endswith("s") else base
    if base in types or singular in types or (base.endswith("es") and base[:-2] in types):
        claim.types.add(base if base in types else singular if singular in types else base[:-2])
        return
    if base in ORDERING:
        claim.ordering = claim.ordering or word
        return
    if base in WEEKDAYS:
        claim.moments.append(Moment(word, "weekday", WEEKDAYS[base]))
        return
    claim.claim_words = True
    root = stem(base)
    if word[0].isupper() and not first and root not in GENERIC_STEMS and not any(
            root in s for s in RELATION_STEMS.values()) and root not in PROOF_STEMS:
        claim.unknown_names.append(word)  # a name the vocabulary does not know: an actor the evidence must name
    claim.relations.setdefault(root, word)


def is_question_to_user(claim: Claim, words: list[str]) -> bool:
    """A question that asks the user something and states nothing: 'Should we alert the team?'."""
    return (claim.text.rstrip().endswith("?") and bool(words) and words[0].lower() in QUESTION_OPENERS
            and not (claim.entities or claim.types or claim.numbers or claim.moments or claim.negation
                     or claim.unknown_names or claim.ordering or claim.invalid)
            and all(w.lower() in CLAIM_FREE | ASKING for w in words))


def plain_words(sentence: str) -> list[str]:
    return _WORD.findall(TAG.sub(" ", strip_list_marker(sentence)))
