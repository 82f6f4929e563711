"""A fuzz campaign (``fuzzaoti fuzz``): generate → check → record until the time is up, then
follow up on what it found.

* ``runner``: the campaign and its phases (``Campaign``);
* ``settings``: what a campaign is asked to do, and what it counts;
* ``in_flight``: the batches handed to the worker pool, and when to queue another;
* ``follow_up``: when a new finding is shrunk and triaged (in the campaign's time or after it);
* ``slowest``: the slowest compiled big run, kept as a check file;
* ``progress``: its progress on the user's screen.
"""

from fuzzaoti.campaign.runner import Campaign
from fuzzaoti.campaign.settings import CampaignSettings, Counts, Mark

__all__ = ["Campaign", "CampaignSettings", "Counts", "Mark"]
