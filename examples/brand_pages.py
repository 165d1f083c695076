"""A brand with a digital bill and a feedback form, from nothing, and the links to open them.

    cargo run --release -- serve &                  # in the checkout, or any running engage
    python3 examples/brand_pages.py                 # SERVER, ENGAGE: examples/engage_example.py

It names the brand and its outlet, recharges the outlet's wallet (each bill and feedback message
is paid from it), turns digital bills (by SMS, at once) and the feedback form on, sends one POS
order (route `/injestion/pos_a`: the orders bills are made for) with a number bills accept, and
prints the bill page's and the feedback form's links (`docs/digital-bills.md`, `docs/feedback.md`).
Open them in a browser. The brand is `pages-demo` (or BRAND); each run makes a new order.
"""

import os
import time

from engage_example import cli, must, post, token

BRAND = os.environ.get("BRAND", "pages-demo")
OUTLET = "outlet-1"
# bills go to mobile numbers only: [6-9] and nine digits, not a run like 9876543210 and not one
# digit repeated (docs/digital-bills.md, "invalid_mobile")
PHONE = "9845012345"
run = str(int(time.time()))

staff = token("staff", BRAND)
headers = {"token": staff}
for business, name in [("0", "Dosa Corner"), (OUTLET, "Dosa Corner, Indiranagar")]:
    body = {"parent_business_id": BRAND, "business_id": business, "business_name": name}
    must(*post("/crm_api/add_b_config", body, headers), "the name")
print(f"brand {BRAND} named Dosa Corner, outlet {OUTLET} named Dosa Corner, Indiranagar")

cli("wallet", "recharge", "--parent", BRAND, "--business", OUTLET, "--amount", "100", "--reference", f"demo-{run}")
print(f"wallet of {OUTLET} recharged with 100.00")

bills = {"parent_business_id": BRAND, "mode": 1, "time": 0, "linkValidity": 30, "brandColor": "#1f3a5f"}
must(*post("/crm_api/links/addBusinessConfig", bills, headers), "the bill configuration")
feedback = {"parent_business_id": BRAND, "feedback_flow": 1, "feedback_sms": "true", "feedback_time": 0,
            "questions": ["How was the food?", "How was the service?"]}
must(*post("/crm_api/save/feedback/config", feedback, headers), "the feedback configuration")
print("digital bills by SMS and the feedback form: on")

order_id = f"BILL-{run}"
order = {"parentBusinessId": BRAND, "businessId": OUTLET, "orderId": order_id,
         "customer": {"name": "Asha", "phone": PHONE},
         "items": [{"name": "masala dosa", "qty": 2, "price": 120}, {"name": "filter coffee", "qty": 2, "price": 40}],
         "amount": 320}
must(*post("/injestion/pos_a", order), "the order")
print(f"order {order_id} of 320.00 for {PHONE}")

# the bill is made by the brand's actor a moment after the order is accepted
bill = None
for _ in range(100):
    status, answer = post("/crm_api/get_digital_bill_customers", {"parent_business_id": BRAND}, headers)
    bill = next((b for b in (answer or {}).get("data") or [] if b.get("order", {}).get("order_id") == order_id
                 or b.get("order_id") == order_id), None)
    if bill:
        break
    time.sleep(0.1)
if not bill:
    raise SystemExit(f"no bill for {order_id}: {answer}")
print(f"bill page:     {bill['short_url']}")
print(f"feedback form: {bill['feedback_url']}")
