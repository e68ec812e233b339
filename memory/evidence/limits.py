"""The limits the evidence tools' arguments are checked against, in a module of their own: the tool registry
declares its schemas with them without importing the recall, reasoning, verification and detection code
(a tenth of a one-shot command's start-up, which needs none of it)."""

MAX_QUERY_CHARS = 4096  # recall, reason, prove, verify: the query text
MAX_TOP_K = 1000
MAX_ANSWER_CHARS = 65_536  # verify: the answer checked
SENSITIVITY_RANGE = (0.25, 4.0)  # detect
