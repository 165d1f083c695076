"""Reads typed answers from a running engage through a client generated from its /openapi.json.

The client is made by openapi-python-client (a stock generator) before this runs: each answer is
parsed into the model the generator wrote from the documented 200 schema, so a field the schema
does not declare, or declares with another type, does not reach these attributes.

usage: use_client.py BASE_URL CLIENT_DIR STAFF_TOKEN INTEGRATION_TOKEN BRAND OUTLET PHONE
Prints what it read as JSON; exits non-zero when an answer is not what the brand holds.
"""

import json
import sys

base, client_dir, staff, integration, brand, outlet, phone = sys.argv[1:8]
sys.path.insert(0, client_dir)

from engage_client import AuthenticatedClient  # noqa: E402
from engage_client.api.platform import (  # noqa: E402
    post_crm_api_wallet_balance,
    post_integration_v1_get_user_loyalty,
)
from engage_client.api.stats import post_stats_dashboard_summary  # noqa: E402
from engage_client.models.customer_loyalty_request import CustomerLoyaltyRequest  # noqa: E402
from engage_client.models.post_crm_api_wallet_balance_body import PostCrmApiWalletBalanceBody  # noqa: E402
from engage_client.models.post_stats_dashboard_summary_body import PostStatsDashboardSummaryBody  # noqa: E402

staff_client = AuthenticatedClient(base_url=base, token=staff, prefix="", auth_header_name="token")
integration_client = AuthenticatedClient(base_url=base, token=integration, prefix="", auth_header_name="Authorization")

wallet = post_crm_api_wallet_balance.sync(
    client=staff_client,
    body=PostCrmApiWalletBalanceBody.from_dict({"parent_business_id": brand, "business_id": outlet}),
)
summary = post_stats_dashboard_summary.sync(
    client=staff_client,
    body=PostStatsDashboardSummaryBody.from_dict({"parent_business_id": brand, "start": "2026-11-01", "end": "2026-11-30"}),
)
loyalty = post_integration_v1_get_user_loyalty.sync(
    client=integration_client,
    body=CustomerLoyaltyRequest.from_dict({"customer_number": phone}),
)

read = {
    "wallet": {"type": type(wallet).__name__, "business_id": wallet.business_id, "balance": wallet.balance,
               "transactions": wallet.transactions},
    "summary": {"type": type(summary).__name__, "orders": summary.data.totals.orders,
                "revenue": summary.data.totals.revenue, "active_outlets": summary.data.active_outlets},
    "loyalty": {"type": type(loyalty).__name__, "loyalty_points": loyalty.loyalty_points},
}
print(json.dumps(read))
