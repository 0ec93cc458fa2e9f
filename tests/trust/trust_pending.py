"""The one switch for the trust tests of issue 12 that describe behaviour still being implemented.

The decoder, analysis model and CLI fixes land separately; until they do, the hostile-corpus, data-loss and
no-evidence tests are expected to fail on many cases. When the fixes land, make this an empty list (one line) and
every such test must pass.
"""

import pytest

PENDING_TRUST_FIXES = [pytest.mark.xfail(strict=False, reason="issue 12: fixed when the trust work lands")]
