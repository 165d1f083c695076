//! One key builder per table: every row's `(table, partition, clustering)` is spelled here once,
//! and capabilities read and write rows through a [`Key`] (`Key::put`, `Key::delete`,
//! [`crate::repo::Repo::get`]). The tables and their layout are listed in [`crate::repo`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use engage_storage::WriteOp;

use crate::domain::time::instant_key;
use crate::repo::*;

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

impl Key {
    fn new(table: &'static str, partition: impl Into<String>, clustering: impl Into<Vec<u8>>) -> Self {
        Self { table, partition: partition.into(), clustering: clustering.into() }
    }

    /// The write of `value` (as JSON) at this key.
    pub fn put(self, value: &impl Serialize) -> WriteOp {
        Repo::put_json(self.table, self.partition, &self.clustering, value)
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

/// A short stable digest of `parts` (16 hex characters): deterministic ids for retried writes.
pub fn digest(parts: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in parts {
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
    Key::new(ORDERS, format!("{tenant}|{outlet}"), order_id.as_bytes())
}

/// `crm_queue`: the record of an envelope, under its IST acceptance day.
pub fn queue_record(tenant: &str, ist_day: &str, received_at: &str, id: &str) -> Key {
    Key::new(CRM_QUEUE, format!("{tenant}|{ist_day}"), format!("{received_at}|{id}").into_bytes())
}

/// `businesses`: an outlet's merged facts.
pub fn business(tenant: &str, business_id: &str) -> Key {
    Key::new(BUSINESSES, tenant, business_id.as_bytes())
}

/// `checkins`: one check-in of a customer.
pub fn checkin(tenant: &str, phone: &str, envelope_id: &str) -> Key {
    Key::new(CHECKINS, format!("{tenant}|{phone}"), envelope_id.as_bytes())
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
    Key::new(WALLET_TXNS, format!("{tenant}|{business}"), seq.to_be_bytes())
}

/// The partition of an outlet's wallet transactions (for paging).
pub fn wallet_txns_partition(tenant: &str, business: &str) -> String {
    format!("{tenant}|{business}")
}

/// `wallet_refs`: the transaction a recharge reference or send id was applied as.
pub fn wallet_ref(tenant: &str, business: &str, reference: &str) -> Key {
    Key::new(WALLET_REFS, format!("{tenant}|{business}"), reference.as_bytes())
}

/// `wallet_pricing`: the brand's price table.
pub fn pricing(tenant: &str) -> Key {
    Key::new(WALLET_PRICING, tenant, b"pricing".to_vec())
}

/// `channel_queue`: a queued send in `<channel>_queue_<YYYYMMDD>`.
pub fn queued_send(queue: &str, delivery_date: &str, tenant: &str, send_id: &str) -> Key {
    Key::new(CHANNEL_QUEUE, format!("{queue}_{delivery_date}"), format!("{tenant}|{send_id}").into_bytes())
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
    Key::new(OTPS, format!("{tenant}|{phone}"), b"otp".to_vec())
}

/// `loyalty_redemptions`: the redemption of an order (or `reward:<reference>`).
pub fn redemption(tenant: &str, phone: &str, order_id: &str) -> Key {
    Key::new(REDEMPTIONS, format!("{tenant}|{phone}"), order_id.as_bytes())
}

/// `pending_redemptions`: the revoke job's index row of a pending POS points redemption.
pub fn pending_redemption(until: DateTime<Utc>, tenant: &str, order_id: &str) -> Key {
    Key::new(PENDING_REDEMPTIONS, "due", format!("{}|{tenant}|{order_id}", instant_key(until)).into_bytes())
}

/// `pending_redemptions`: the revoke job's index row of a pending POS coupon use.
pub fn pending_coupon_use(until: DateTime<Utc>, tenant: &str, code: &str) -> Key {
    Key::new(PENDING_REDEMPTIONS, "due", format!("{}|{tenant}|coupon:{code}", instant_key(until)).into_bytes())
}

/// `loyalty_rules`: the brand's rules.
pub fn loyalty_rules(tenant: &str) -> Key {
    Key::new(LOYALTY_RULES, tenant, b"rules".to_vec())
}

/// `loyalty_ledger`: a customer's ledger row number `seq`.
pub fn ledger(tenant: &str, phone: &str, seq: u64) -> Key {
    Key::new(LOYALTY_LEDGER, format!("{tenant}|{phone}"), seq.to_be_bytes())
}

/// The partition of a customer's ledger (for paging).
pub fn ledger_partition(tenant: &str, phone: &str) -> String {
    format!("{tenant}|{phone}")
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
    format!("{tenant}|{ist_day}")
}

/// `points_expiry`: the expiry job's index row of a customer's lot.
pub fn points_expiry(expires_at: DateTime<Utc>, tenant: &str, phone: &str) -> Key {
    Key::new(POINTS_EXPIRY, "due", format!("{}|{tenant}|{phone}", instant_key(expires_at)).into_bytes())
}

/// `campaign_journeys`: a brand's journey configuration.
pub fn campaign_journey(tenant: &str, id: &str) -> Key {
    Key::new(CAMPAIGN_JOURNEYS, tenant, id.as_bytes())
}

/// `journey_types`: a journey type added by `/crm_api/autoCampaign`.
pub fn journey_type(id: &str) -> Key {
    Key::new(JOURNEY_TYPES, "all", id.as_bytes())
}

/// `journey_brands`: the brands that have journeys (the jobs
/// walk it).
pub fn journey_brand(tenant: &str) -> Key {
    Key::new(JOURNEY_BRANDS, "all", tenant.as_bytes())
}

/// The partition of a journey's decisions.
pub fn journey_sends_partition(tenant: &str, journey: &str) -> String {
    format!("{tenant}|{journey}")
}

/// `journey_sends`: a journey's decision about one customer for one occasion.
pub fn journey_send(tenant: &str, journey: &str, phone: &str, occasion: &str) -> Key {
    Key::new(JOURNEY_SENDS, journey_sends_partition(tenant, journey), format!("{phone}|{occasion}").into_bytes())
}

/// `journey_runs`: a journey's send history of one IST day.
pub fn journey_run(tenant: &str, journey: &str, day: &str) -> Key {
    Key::new(JOURNEY_RUNS, tenant, format!("{journey}|{day}").into_bytes())
}

/// `journey_settings`: the brand's quiet hours and frequency cap.
pub fn journey_settings(tenant: &str) -> Key {
    Key::new(JOURNEY_SETTINGS, tenant, b"settings".to_vec())
}

/// The partition of a journey's ROI rows.
pub fn campaign_roi_partition(tenant: &str, journey: &str) -> String {
    format!("{tenant}|{journey}")
}

/// `auto_campaign_roi`: a journey's ROI of one day and mode.
pub fn campaign_roi(tenant: &str, journey: &str, day: &str, mode: &str) -> Key {
    Key::new(CAMPAIGN_ROI, campaign_roi_partition(tenant, journey), format!("{day}|{mode}").into_bytes())
}

/// `open_carts`: a cart the abandoned-cart job looks at.
pub fn open_cart(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(OPEN_CARTS, "all", format!("{tenant}|{outlet}/{order_id}").into_bytes())
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
    Key::new(BILL_FUNNEL, tenant, format!("{ist_day}|{business}").into_bytes())
}

/// `bill_skips`: an order that got no bill, under the IST day it was accepted.
pub fn bill_skip(tenant: &str, ist_day: &str, business: &str, order_id: &str) -> Key {
    Key::new(BILL_SKIPS, format!("{tenant}|{ist_day}"), format!("{business}|{order_id}").into_bytes())
}

/// `bill_brands`: a brand with bill configurations (the bill jobs walk it).
pub fn bill_brand(tenant: &str) -> Key {
    Key::new(BILL_BRANDS, "all", tenant.as_bytes())
}

/// `feedback_configs`: a business's feedback configuration (`"0"` for the brand's own).
pub fn feedback_config(tenant: &str, child: &str) -> Key {
    Key::new(FEEDBACK_CONFIGS, tenant, child.as_bytes())
}

/// `feedback_requests`: the feedback link sent after an order.
pub fn feedback_request(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(FEEDBACK_REQUESTS, tenant, format!("{outlet}|{order_id}").into_bytes())
}

/// `feedback_funnel`: an outlet's feedback funnel of an IST day.
pub fn feedback_funnel(tenant: &str, ist_day: &str, outlet: &str) -> Key {
    Key::new(FEEDBACK_FUNNEL, tenant, format!("{ist_day}|{outlet}").into_bytes())
}

/// `ratings`: a rating of an order from one source.
pub fn rating(tenant: &str, outlet: &str, order_id: &str, source: &str) -> Key {
    Key::new(RATINGS, tenant, format!("{outlet}|{order_id}|{source}").into_bytes())
}

/// `nps_responses`: an NPS response.
pub fn nps_response(tenant: &str, nps_id: &str) -> Key {
    Key::new(NPS_RESPONSES, tenant, nps_id.as_bytes())
}

/// `feedback_brands`: a brand with feedback configurations or ratings (the NPS conversion walks
/// it).
pub fn feedback_brand(tenant: &str) -> Key {
    Key::new(FEEDBACK_BRANDS, "all", tenant.as_bytes())
}

/// `feedback_recoveries`: the low-rating recovery of an order.
pub fn feedback_recovery(tenant: &str, outlet: &str, order_id: &str) -> Key {
    Key::new(FEEDBACK_RECOVERIES, tenant, format!("{outlet}|{order_id}").into_bytes())
}

/// `store_reviews`: an app-store review of a brand.
pub fn store_review(tenant: &str, store: &str, review_id: &str) -> Key {
    Key::new(STORE_REVIEWS, format!("{tenant}|{store}"), review_id.as_bytes())
}

/// `review_markers`: a brand's last-reviewed marker of one store.
pub fn review_marker(tenant: &str, store: &str) -> Key {
    Key::new(REVIEW_MARKERS, tenant, store.as_bytes())
}

/// `legacy_feedback_sms`: a legacy feedback SMS (a gateway URL to GET).
pub fn legacy_sms(tenant: &str, id: &str) -> Key {
    Key::new(LEGACY_FEEDBACK_SMS, "all", format!("{tenant}|{id}").into_bytes())
}

/// `stats_days`: the rollup of one scope (an outlet, or `*` for the brand) on one IST day.
pub fn stats_day(tenant: &str, scope: &str, ist_day: &str) -> Key {
    Key::new(STATS_DAYS, stats_days_partition(tenant, scope), ist_day.as_bytes())
}

/// The `stats_days` partition of one scope.
pub fn stats_days_partition(tenant: &str, scope: &str) -> String {
    format!("{tenant}|{scope}")
}

/// `stats_special_days`: a day a brand marked special.
pub fn stats_special_day(tenant: &str, ist_day: &str) -> Key {
    Key::new(STATS_SPECIAL_DAYS, tenant, ist_day.as_bytes())
}
