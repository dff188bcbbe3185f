"""What the systems share, so that no system reaches into another one's module: the user's stated state read
from a turn row (`state`), the tokeniser and query (`text`), template responses with verbatim quotes
(`responses`) and distances (`geo`)."""
