"""The bounds of what the driver is asked, as numbers: the longest message a trial
times, a KAT file's deadline, and a trial's deadline from its cold call with its cap.

They are apart from the modes that apply them (:mod:`ngcc.driver.child`,
:mod:`ngcc.driver.timing`) so that the campaign settings' options can state them
without loading the code that runs foreign libraries (nor numpy): the command line's
start reads them here.
"""

from __future__ import annotations

#: The longest message ``time_calls`` accepts: 1 GiB, checked before anything is
#: allocated. The official lengths stop at 64 KiB.
MAX_MESSAGE_BYTES = 1 << 30
#: Seconds allowed per KAT file by default (three 1 GiB messages for KAT_2_33,
#: 10^6 chained calls for KAT_Loop).
KAT_TIMEOUTS = {"2_12": 600.0, "2_23": 600.0, "2_33": 7200.0, "Loop": 7200.0}
#: The most seconds a trial's deadline derived from its cold call may be. The cold call
#: is the library's own first call, so a library that makes it slow (100 s) would
#: otherwise buy its trials a deadline of a quarter of an hour; a trial that truly
#: needs longer is given ``trial_timeout`` (``--trial-timeout``) or a higher cap.
MAX_TRIAL_TIMEOUT = 300.0
#: A trial's deadline from its cold call: this many times its estimate, plus the slack.
TRIAL_TIMEOUT_FACTOR = 10.0
TRIAL_TIMEOUT_SLACK = 60.0
