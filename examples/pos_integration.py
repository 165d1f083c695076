"""A point-of-sale integration, end to end: a token, a loyalty rule, an order, the customer's
points, a partial refund and what it takes back.

    cargo run --release -- serve &                  # in the checkout, or any running engage
    python3 examples/pos_integration.py             # SERVER, ENGAGE: examples/engage_example.py

Each step prints one line. The brand is `pos-demo` (make your own by setting BRAND); each run uses
new order ids, so it can be run again.
"""

import json
import os
import time

from engage_example import must, post, token

BRAND = os.environ.get("BRAND", "pos-demo")
OUTLET = "outlet-1"
PHONE = "9845012345"
run = str(int(time.time()))

integration = token("integration", BRAND)     # POS systems send orders with this one
staff = token("staff", BRAND)                 # the brand's staff set rules and read reports
print(f"tokens: integration and staff for {BRAND}")

rules = {"parent_business_id": BRAND, "earn_percent": 10, "min_bill": 0}
must(*post("/crm_api/add_edit_rules", rules, {"token": staff}), "the loyalty rule")
print("loyalty rule: 10% of every bill in points")


def customer():
    body = {"parent_business_id": BRAND, "customer_number": PHONE}
    return must(*post("/crm_api/get/customer/details", body), "the customer")["customer"]


before = customer() if post("/crm_api/get/customer/details",
                            {"parent_business_id": BRAND, "customer_number": PHONE})[0] == 200 else None
order_id = f"POS-{run}"
order = {"businessId": OUTLET, "orderId": order_id, "customer": {"name": "Asha", "phone": PHONE},
         "items": [{"name": "masala dosa", "qty": 2, "price": 120}], "amount": 240}
answer = must(*post("/api/ingestion/orderPush", order, {"Authorization": integration}), "the order")
print(f"order {order_id} of 240.00: {json.dumps(answer)}")

# orders are applied by the brand's actor a moment after they are accepted
for _ in range(100):
    now = customer() if post("/crm_api/get/customer/details",
                             {"parent_business_id": BRAND, "customer_number": PHONE})[0] == 200 else None
    if now and (before is None or now["total_orders"] > before["total_orders"]):
        break
    time.sleep(0.1)
earned = now["loyalty_points"] - (before["loyalty_points"] if before else 0)
orders = f"{now['total_orders']} order" + ("" if now["total_orders"] == 1 else "s")
print(f"customer {PHONE}: {orders}, +{earned:g} points, {now['loyalty_points']:g} points in all")

refund = {"businessId": OUTLET, "orderId": order_id, "refundId": f"RF-{run}", "amount": 40}
must(*post("/integration/v1/order/refund", refund, {"Authorization": integration}), "the refund")
for _ in range(100):
    after = customer()
    if after["loyalty_points"] < now["loyalty_points"]:
        break
    time.sleep(0.1)
taken = now["loyalty_points"] - after["loyalty_points"]
print(f"refund of 40.00 on {order_id}: -{taken:g} points, {after['loyalty_points']:g} points in all, "
      f"lifetime value {after['lifetime_value']:g}")
