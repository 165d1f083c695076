//! One key builder per table: every row's `(table, partition, clustering)` is spelled here once,
//! and capabilities read and write rows through a [`Key`] (`Key::put`, `Key::delete`,
//! [`crate::repo::Repo::get`]). The tables and their layout are listed in [`crate::repo`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use engage_storage::WriteOp;

use crate::domain::time::instant_key;
use crate::tables::*;

/// Where one row lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The table.
    pub table: &'static str,
    /// The partition key.
    pub partition: String,
    /// The clustering key.
    pub clustering: Vec<u8>,
}

/// The write of `value` as JSON at (`table`, `partition`, `clustering`).
pub fn put_json(table: &'static str, partition: String, clustering: &[u8], value: &impl Serialize) -> WriteOp {
    WriteOp::Put {
        table,
        partition,
        clustering: clustering.to_vec(),
        value: serde_json::to_vec(value).unwrap_or_default(),
    }
}

impl Key {
    fn new(table: &'static str, partition: impl Into<String>, clustering: impl Into<Vec<u8>>) -> Self {
        Self { table, partition: partition.into(), clustering: clustering.into() }
    }

    /// The write of `value` (as JSON) at this key.
    pub fn put(self, value: &impl Serialize) -> WriteOp {
        put_json(self.table, self.partition, &self.clustering, value)
    }

    /// The delete of this key.
    pub fn delete(self) -> WriteOp {
        WriteOp::Delete { table: self.table, partition: self.partition, clustering: self.clustering }
    }

    /// `table partition/clustering`, for error messages.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.partition, String::from_utf8_lossy(&self.clustering))
    }
}

/// What starts the last part of a pending coupon use's key in `pending_redemptions`.
const COUPON_PREFIX: &str = "coupon:";

/// The separator of joined key parts.
const SEPARATOR: char = '|';
/// The escape character of key parts.
const ESCAPE: char = '\\';

/// One key part with `\\` and `|` escaped by a `\\` before each: an id free of those two
/// characters keeps its bytes (so rows written before keys were escaped read back unchanged).
pub fn escape(part: &str) -> std::borrow::Cow<'_, str> {
    escape_chars(part, &[ESCAPE, SEPARATOR])
}

fn escape_chars<'a>(part: &'a str, special: &[char]) -> std::borrow::Cow<'a, str> {
    if !part.contains(special) {
        return std::borrow::Cow::Borrowed(part);
    }
    let mut out = String::with_capacity(part.len() + 4);
    for c in part.chars() {
        if special.contains(&c) {
            out.push(ESCAPE);
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// Key parts joined by `|`, each [`escape`]d: injective (no two different lists of parts give the
/// same key, whatever characters the ids hold) and prefix-safe (the key of `[a, b]` starts with
/// `join([a]) + "|"` only when its first part is `a`).
pub fn join(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(SEPARATOR);
        }
        out.push_str(&escape(part));
    }
    out
}

/// The parts of a key [`join`] made (its inverse: `split(&join(parts)) == parts`).
pub fn split(key: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = key.chars();
    while let Some(c) = chars.next() {
        match c {
            ESCAPE => parts.last_mut().into_iter().for_each(|p| p.extend(chars.next())),
            SEPARATOR => parts.push(String::new()),
            c => parts.last_mut().into_iter().for_each(|p| p.push(c)),
        }
    }
    parts
}

/// A short stable digest of `parts` (16 hex characters): deterministic ids for retried writes.
pub fn digest(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in parts {
        // a part holding NUL is hashed as 0xFF (never a UTF-8 byte), its length, then the part:
        // the parts stay apart, and every other part hashes as it always did
        if part.contains('\0') {
            hasher.update([0xff]);
            hasher.update((part.len() as u64).to_be_bytes());
        }
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(&hasher.finalize()[..8])
}

/// `customers`: a customer of the brand.
pub fn customer(tenant: &str, phone: &str) -> Key {
    Key::new(CUSTOMERS, tenant, phone.as_bytes())
}

/// `orders`: an order of an outlet.
pub fn order(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(ORDERS, join(&[tenant, outlet]), order_id.as_bytes())
}

/// `crm_queue`: the record of an envelope, under its IST acceptance day.
pub fn queue_record(tenant: &str, ist_day: &str, received_at: &str, id: &str) -> Key {
    Key::new(CRM_QUEUE, queue_partition(tenant, ist_day), join(&[received_at, id]).into_bytes())
}

/// The `crm_queue` partition of a brand's IST day.
pub fn queue_partition(tenant: &str, ist_day: &str) -> String {
    join(&[tenant, ist_day])
}

/// `businesses`: an outlet's merged facts.
pub fn business(tenant: &str, business_id: &str) -> Key {
    Key::new(BUSINESSES, tenant, business_id.as_bytes())
}

/// `checkins`: one check-in of a customer.
pub fn checkin(tenant: &str, phone: &str, envelope_id: &str) -> Key {
    Key::new(CHECKINS, checkins_partition(tenant, phone), envelope_id.as_bytes())
}

/// `customer_orders`: order `outlet/orderId` of a customer.
pub fn customer_order(tenant: &str, phone: &str, order_key: &str) -> Key {
    Key::new(CUSTOMER_ORDERS, customer_orders_partition(tenant, phone), order_key.as_bytes())
}

/// The partition of a customer's orders.
pub fn customer_orders_partition(tenant: &str, phone: &str) -> String {
    join(&[tenant, phone])
}

/// The partition of a customer's check-ins.
pub fn checkins_partition(tenant: &str, phone: &str) -> String {
    join(&[tenant, phone])
}

/// `fraud_config`: `velocity` or `alerts`.
pub fn fraud_config(tenant: &str, which: &str) -> Key {
    Key::new(FRAUD_CONFIG, tenant, which.as_bytes())
}

/// `fraud_blocklist`: a blocklisted contact.
pub fn blocklist(tenant: &str, phone: &str) -> Key {
    Key::new(BLOCKLIST, tenant, phone.as_bytes())
}

/// `fraud_flags`: a flag.
pub fn fraud_flag(tenant: &str, flag_id: &str) -> Key {
    Key::new(FRAUD_FLAGS, tenant, flag_id.as_bytes())
}

/// `business_wallets`: an outlet's wallet.
pub fn wallet(tenant: &str, business: &str) -> Key {
    Key::new(BUSINESS_WALLETS, tenant, business.as_bytes())
}

/// `wallet_txns`: the wallet's transaction number `seq`.
pub fn wallet_txn(tenant: &str, business: &str, seq: u64) -> Key {
    Key::new(WALLET_TXNS, join(&[tenant, business]), seq.to_be_bytes())
}

/// The partition of an outlet's wallet transactions (for paging).
pub fn wallet_txns_partition(tenant: &str, business: &str) -> String {
    join(&[tenant, business])
}

/// `wallet_refs`: the transaction a recharge reference or send id was applied as.
pub fn wallet_ref(tenant: &str, business: &str, reference: &str) -> Key {
    Key::new(WALLET_REFS, join(&[tenant, business]), reference.as_bytes())
}

/// `wallet_pricing`: the brand's price table.
pub fn pricing(tenant: &str) -> Key {
    Key::new(WALLET_PRICING, tenant, b"pricing".to_vec())
}

/// `channel_queue`: a queued send in `<channel>_queue_<YYYYMMDD>`.
pub fn queued_send(queue: &str, delivery_date: &str, tenant: &str, send_id: &str) -> Key {
    Key::new(CHANNEL_QUEUE, format!("{queue}_{delivery_date}"), join(&[tenant, send_id]).into_bytes())
}

/// `channel_work`: the work-left marker of a queued send (see [`CHANNEL_WORK`]).
pub fn channel_work(queue: &str, delivery_date: &str, tenant: &str, send_id: &str) -> Key {
    Key::new(CHANNEL_WORK, format!("{queue}_{delivery_date}"), join(&[tenant, send_id]).into_bytes())
}

/// `job_cursors`: whether the sends of queue partition `partition` queued before the work
/// markers existed were given theirs.
pub fn channel_work_indexed(partition: &str) -> Key {
    Key::new(JOB_CURSORS, CHANNEL_WORK, partition.as_bytes().to_vec())
}

/// `order_refunds`: the refunds of one order sent on their own.
pub fn order_refunds(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(ORDER_REFUNDS, tenant, join(&[outlet, order_id]).into_bytes())
}

/// `rewards`: a reward of the catalogue.
pub fn reward(tenant: &str, reward_id: &str) -> Key {
    Key::new(REWARDS, tenant, reward_id.as_bytes())
}

/// `coupons`: a coupon.
pub fn coupon(tenant: &str, code: &str) -> Key {
    Key::new(COUPONS, tenant, code.as_bytes())
}

/// `pending_coupons`: the coupon waiting for an order.
pub fn pending_coupon(tenant: &str, order_id: &str) -> Key {
    Key::new(PENDING_COUPONS, tenant, order_id.as_bytes())
}

/// `loyalty_otps`: a customer's current one-time password.
pub fn otp(tenant: &str, phone: &str) -> Key {
    Key::new(OTPS, join(&[tenant, phone]), b"otp".to_vec())
}

/// `loyalty_redemptions`: the redemption of an order (or `reward:<reference>`).
pub fn redemption(tenant: &str, phone: &str, order_id: &str) -> Key {
    Key::new(REDEMPTIONS, join(&[tenant, phone]), order_id.as_bytes())
}

/// `pending_redemptions`: the revoke job's index row of a pending POS points redemption.
pub fn pending_redemption(until: DateTime<Utc>, tenant: &str, order_id: &str) -> Key {
    let due = instant_key(until);
    // an order id that looks like a coupon row's last part gets a part more, so the two never meet
    let clustering = match order_id.starts_with(COUPON_PREFIX) {
        false => join(&[&due, tenant, order_id]),
        true => join(&[&due, tenant, "order", order_id]),
    };
    Key::new(PENDING_REDEMPTIONS, due_bucket(until), clustering.into_bytes())
}

/// The partition the due-time indexes (`pending_redemptions`, `points_expiry`) kept every row in
/// before they were bucketed by day; the jobs still read what is left in it.
pub const LEGACY_DUE: &str = "due";

/// The day bucket of a due-time index row: `due|YYYY-MM-DD`, the UTC day it falls due. A job run
/// reads the buckets from its cursor to today, never every brand's rows of every day.
pub fn due_bucket(at: DateTime<Utc>) -> String {
    join(&[LEGACY_DUE, &at.format("%Y-%m-%d").to_string()])
}

/// `job_cursors`: the oldest day bucket of a due-time index that may still hold rows.
pub fn due_cursor(table: &str) -> Key {
    Key::new(JOB_CURSORS, table, b"oldest_day".to_vec())
}

/// `pending_redemptions`: the revoke job's index row of a pending POS coupon use.
pub fn pending_coupon_use(until: DateTime<Utc>, tenant: &str, code: &str) -> Key {
    let last = format!("{COUPON_PREFIX}{code}");
    Key::new(PENDING_REDEMPTIONS, due_bucket(until), join(&[&instant_key(until), tenant, &last]).into_bytes())
}

/// `loyalty_rules`: the brand's rules.
pub fn loyalty_rules(tenant: &str) -> Key {
    Key::new(LOYALTY_RULES, tenant, b"rules".to_vec())
}

/// `loyalty_ledger`: a customer's ledger row number `seq`.
pub fn ledger(tenant: &str, phone: &str, seq: u64) -> Key {
    Key::new(LOYALTY_LEDGER, join(&[tenant, phone]), seq.to_be_bytes())
}

/// The partition of a customer's ledger (for paging).
pub fn ledger_partition(tenant: &str, phone: &str) -> String {
    join(&[tenant, phone])
}

/// `loyalty_daily`: the copy of ledger row `seq` under its IST day.
pub fn loyalty_daily(tenant: &str, ist_day: &str, phone: &str, seq: u64) -> Key {
    let mut clustering = phone.as_bytes().to_vec();
    clustering.push(b'|');
    clustering.extend_from_slice(&seq.to_be_bytes());
    Key::new(LOYALTY_DAILY, loyalty_daily_partition(tenant, ist_day), clustering)
}

/// The partition of a brand's IST day in `loyalty_daily`.
pub fn loyalty_daily_partition(tenant: &str, ist_day: &str) -> String {
    join(&[tenant, ist_day])
}

/// `points_expiry`: the expiry job's index row of a customer's lot.
pub fn points_expiry(expires_at: DateTime<Utc>, tenant: &str, phone: &str) -> Key {
    Key::new(POINTS_EXPIRY, due_bucket(expires_at), join(&[&instant_key(expires_at), tenant, phone]).into_bytes())
}

/// `campaign_journeys`: a brand's journey configuration.
pub fn campaign_journey(tenant: &str, id: &str) -> Key {
    Key::new(CAMPAIGN_JOURNEYS, tenant, id.as_bytes())
}

/// `journey_types`: a journey type the brand added with `/crm_api/autoCampaign`.
pub fn journey_type(tenant: &str, id: &str) -> Key {
    Key::new(JOURNEY_TYPES, journey_types_partition(tenant), id.as_bytes())
}

/// The `journey_types` partition of the types a brand added: `brand|<tenant>`, never the
/// partition `all` of the types releases before 0.2 kept for every brand (listed read-only).
pub fn journey_types_partition(tenant: &str) -> String {
    join(&["brand", tenant])
}

/// The `journey_types` partition of the types added before types belonged to a brand.
pub const LEGACY_JOURNEY_TYPES: &str = "all";

/// `journey_brands`: the brands that have journeys (the jobs
/// walk it).
pub fn journey_tenant(tenant: &str) -> Key {
    Key::new(JOURNEY_BRANDS, "all", tenant.as_bytes())
}

/// The partition of a journey's decisions.
pub fn journey_sends_partition(tenant: &str, journey: &str) -> String {
    join(&[tenant, journey])
}

/// `journey_sends`: a journey's decision about one customer for one occasion.
pub fn journey_send(tenant: &str, journey: &str, phone: &str, occasion: &str) -> Key {
    Key::new(JOURNEY_SENDS, journey_sends_partition(tenant, journey), join(&[phone, occasion]).into_bytes())
}

/// `journey_runs`: a journey's send history of one IST day.
pub fn journey_run(tenant: &str, journey: &str, day: &str) -> Key {
    Key::new(JOURNEY_RUNS, tenant, join(&[journey, day]).into_bytes())
}

/// `consent`: a customer's marketing subscriptions in a brand.
pub fn consent(tenant: &str, phone: &str) -> Key {
    // one row per customer whatever form the number came in (+91…, 91…, 0…, spaced): every door
    // and every check (queue, drain, export, erasure) reads and writes the same one
    Key::new(CONSENT, tenant, crate::domain::phone::canonical(phone).as_bytes())
}

/// `consent`: the brand's defaults (a clustering no phone has: phones are digits).
pub fn consent_defaults(tenant: &str) -> Key {
    Key::new(CONSENT, tenant, b"~defaults".to_vec())
}

/// `brand_senders`: the brand's sender on `channel`.
pub fn brand_sender(tenant: &str, channel: crate::domain::wallet::Channel) -> Key {
    Key::new(BRAND_SENDERS, tenant, channel.queue().as_bytes().to_vec())
}

/// `sender_directory`: whose sender `number` of `account` at `provider` is.
pub fn sender_directory(provider: &str, account: &str, number: &str) -> Key {
    Key::new(SENDER_DIRECTORY, provider, format!("{account}|{number}").into_bytes())
}

/// `consent_links`: whose opt-out link `/u/<code>` is.
pub fn consent_link(code: &str) -> Key {
    Key::new(CONSENT_LINKS, code.get(..2).unwrap_or(code), code.as_bytes())
}

/// `journey_settings`: the brand's quiet hours and frequency cap.
pub fn journey_settings(tenant: &str) -> Key {
    Key::new(JOURNEY_SETTINGS, tenant, b"settings".to_vec())
}

/// The partition of a journey's ROI rows.
pub fn campaign_roi_partition(tenant: &str, journey: &str) -> String {
    join(&[tenant, journey])
}

/// `auto_campaign_roi`: a journey's ROI of one day and mode.
pub fn campaign_roi(tenant: &str, journey: &str, day: &str, mode: &str) -> Key {
    Key::new(CAMPAIGN_ROI, campaign_roi_partition(tenant, journey), join(&[day, mode]).into_bytes())
}

/// `open_carts`: a cart the abandoned-cart job looks at.
pub fn open_cart(tenant: &str, outlet: &str, order_id: &str) -> Key {
    // `tenant|outlet/order_id` as it always was, the first two parts escaped for `/` as well: the
    // order id, last, runs to the end
    let special = [ESCAPE, SEPARATOR, '/'];
    let partition = open_carts_partition(tenant);
    let (tenant, outlet) = (escape_chars(tenant, &special), escape_chars(outlet, &special));
    Key::new(OPEN_CARTS, partition, format!("{tenant}{SEPARATOR}{outlet}/{order_id}").into_bytes())
}

/// The brand's partition of `open_carts` (its own carts only).
pub fn open_carts_partition(tenant: &str) -> String {
    join(&["brand", tenant])
}

/// The partition `open_carts` kept every brand's carts in before each brand had its own; the
/// abandoned-cart job moves what is left there into the brands' partitions.
pub const LEGACY_OPEN_CARTS: &str = "all";

/// `cart_brands`: a brand that indexed a cart (the abandoned-cart job asks each).
pub fn cart_tenant(tenant: &str) -> Key {
    Key::new(CART_BRANDS, "all", tenant.as_bytes().to_vec())
}

/// `campaign_tags`: a brand's campaign tag.
pub fn campaign_tag(tenant: &str, tag_id: &str) -> Key {
    Key::new(CAMPAIGN_TAGS, tenant, tag_id.as_bytes())
}

/// `bulk_campaigns`: a bulk campaign (ids are zero-padded so they sort numerically).
pub fn bulk_campaign(tenant: &str, campaign_id: u64) -> Key {
    Key::new(BULK_CAMPAIGNS, tenant, format!("{campaign_id:012}").into_bytes())
}

/// `business_configs`: the flags of `business` (`0`: the brand's own record).
pub fn business_config(tenant: &str, business: &str) -> Key {
    Key::new(BUSINESS_CONFIGS, tenant, business.as_bytes())
}

/// `service_secrets`: a secret engage made itself.
pub fn service_secret(name: &str) -> Key {
    Key::new(SERVICE_SECRETS, "all", name.as_bytes())
}

/// `bill_configs`: a business's bill configuration (the brand's own under the brand's id).
pub fn bill_config(tenant: &str, business: &str) -> Key {
    Key::new(BILL_CONFIGS, tenant, business.as_bytes())
}

/// `bill_widgets`: a widget mapping of the brand, by its id.
pub fn bill_widget(tenant: &str, id: u64) -> Key {
    Key::new(BILL_WIDGETS, tenant, id.to_be_bytes().to_vec())
}

/// `digital_bills`: a bill.
pub fn digital_bill(tenant: &str, bill_id: &str) -> Key {
    Key::new(DIGITAL_BILLS, tenant, bill_id.as_bytes())
}

/// `bill_codes`: which brand a bill's own short link (`/b/<bill_id>`) belongs to; partitioned by
/// the id's first two characters.
pub fn bill_code(bill_id: &str) -> Key {
    Key::new(BILL_CODES, bill_id.get(..2).unwrap_or(bill_id), bill_id.as_bytes())
}

/// `bill_aliases`: a link service's bill id, to the bill's own.
pub fn bill_alias(tenant: &str, alias: &str) -> Key {
    Key::new(BILL_ALIASES, tenant, alias.as_bytes())
}

/// `bill_funnel`: an outlet's funnel of an IST day.
pub fn bill_funnel(tenant: &str, ist_day: &str, business: &str) -> Key {
    Key::new(BILL_FUNNEL, tenant, join(&[ist_day, business]).into_bytes())
}

/// `bill_skips`: an order that got no bill, under the IST day it was accepted.
pub fn bill_skip(tenant: &str, ist_day: &str, business: &str, order_id: &str) -> Key {
    Key::new(BILL_SKIPS, bill_skips_partition(tenant, ist_day), join(&[business, order_id]).into_bytes())
}

/// The `bill_skips` partition of a brand's IST day.
pub fn bill_skips_partition(tenant: &str, ist_day: &str) -> String {
    join(&[tenant, ist_day])
}

/// `bill_brands`: a brand with bill configurations (the bill jobs walk it).
pub fn bill_tenant(tenant: &str) -> Key {
    Key::new(BILL_BRANDS, "all", tenant.as_bytes())
}

/// `feedback_configs`: a business's feedback configuration (`"0"` for the brand's own).
pub fn feedback_config(tenant: &str, child: &str) -> Key {
    Key::new(FEEDBACK_CONFIGS, tenant, child.as_bytes())
}

/// `feedback_requests`: the feedback link sent after an order.
pub fn feedback_request(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(FEEDBACK_REQUESTS, tenant, join(&[outlet, order_id]).into_bytes())
}

/// `consent_skips`: an outlet's marketing sends skipped for consent on an IST day.
pub fn consent_skips(tenant: &str, ist_day: &str, outlet: &str) -> Key {
    Key::new(crate::tables::CONSENT_SKIPS, tenant, join(&[ist_day, outlet]).into_bytes())
}

/// `send_receipts`: an outlet's receipts of an IST day.
pub fn send_receipts(tenant: &str, ist_day: &str, outlet: &str) -> Key {
    Key::new(crate::tables::SEND_RECEIPTS, tenant, join(&[ist_day, outlet]).into_bytes())
}

/// `feedback_funnel`: an outlet's feedback funnel of an IST day.
pub fn feedback_funnel(tenant: &str, ist_day: &str, outlet: &str) -> Key {
    Key::new(FEEDBACK_FUNNEL, tenant, join(&[ist_day, outlet]).into_bytes())
}

/// `ratings`: a rating of an order from one source.
pub fn rating(tenant: &str, outlet: &str, order_id: &str, source: &str) -> Key {
    Key::new(RATINGS, tenant, join(&[outlet, order_id, source]).into_bytes())
}

/// `nps_responses`: an NPS response.
pub fn nps_response(tenant: &str, nps_id: &str) -> Key {
    Key::new(NPS_RESPONSES, tenant, nps_id.as_bytes())
}

/// `feedback_brands`: a brand with feedback configurations or ratings (the NPS conversion walks
/// it).
pub fn feedback_tenant(tenant: &str) -> Key {
    Key::new(FEEDBACK_BRANDS, "all", tenant.as_bytes())
}

/// `feedback_recoveries`: the low-rating recovery of an order.
pub fn feedback_recovery(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(FEEDBACK_RECOVERIES, tenant, join(&[outlet, order_id]).into_bytes())
}

/// `store_reviews`: an app-store review of a brand.
pub fn store_review(tenant: &str, store: &str, review_id: &str) -> Key {
    Key::new(STORE_REVIEWS, store_reviews_partition(tenant, store), review_id.as_bytes())
}

/// The `store_reviews` partition of a brand's store.
pub fn store_reviews_partition(tenant: &str, store: &str) -> String {
    join(&[tenant, store])
}

/// `review_markers`: a brand's last-reviewed marker of one store.
pub fn review_marker(tenant: &str, store: &str) -> Key {
    Key::new(REVIEW_MARKERS, tenant, store.as_bytes())
}

/// `legacy_feedback_sms`: a legacy feedback SMS (a gateway URL to GET), in its brand's `pending`
/// partition while the drain may still call it, in its `done` partition once sent or given up.
pub fn legacy_sms(tenant: &str, id: &str, pending: bool) -> Key {
    Key::new(LEGACY_FEEDBACK_SMS, legacy_sms_partition(tenant, pending), join(&[tenant, id]).into_bytes())
}

/// The brand's partition of `legacy_feedback_sms` for rows still to call (`pending`) or settled.
pub fn legacy_sms_partition(tenant: &str, pending: bool) -> String {
    join(&[if pending { "pending" } else { "done" }, tenant])
}

/// The partition `legacy_feedback_sms` kept every brand's rows in before; the drain moves what is
/// left there into the brands' partitions.
pub const LEGACY_SMS_ALL: &str = "all";

/// `legacy_sms_brands`: a brand that queued a legacy feedback SMS (the drain reads each).
pub fn legacy_sms_tenant(tenant: &str) -> Key {
    Key::new(LEGACY_SMS_BRANDS, "all", tenant.as_bytes().to_vec())
}

/// `stats_days`: the rollup of one scope (an outlet, or `*` for the brand) on one IST day.
pub fn stats_day(tenant: &str, scope: &str, ist_day: &str) -> Key {
    Key::new(STATS_DAYS, stats_days_partition(tenant, scope), ist_day.as_bytes())
}

/// The `stats_days` partition of one scope.
pub fn stats_days_partition(tenant: &str, scope: &str) -> String {
    join(&[tenant, scope])
}

/// `stats_special_days`: a day a brand marked special.
pub fn stats_special_day(tenant: &str, ist_day: &str) -> Key {
    Key::new(STATS_SPECIAL_DAYS, tenant, ist_day.as_bytes())
}

/// `access_settings`: whether the brand closed the spec's open routes.
pub fn open_routes_setting(tenant: &str) -> Key {
    Key::new(ACCESS_SETTINGS, tenant, b"open_routes".to_vec())
}

#[cfg(test)]
mod tests;
