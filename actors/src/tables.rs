//! The names of the store's tables (their layout is listed in [`crate::repo`]): a leaf module,
//! so the key builders ([`crate::keys`]) and the typed tables ([`crate::repo`]) share them without
//! importing each other.

/// `customers`.
pub const CUSTOMERS: &str = "customers";
/// `orders`.
pub const ORDERS: &str = "orders";
/// `crm_queue`.
pub const CRM_QUEUE: &str = "crm_queue";
/// `businesses`.
pub const BUSINESSES: &str = "businesses";
/// `checkins`.
pub const CHECKINS: &str = "checkins";
/// `fraud_config`: partition tenant, clustering `velocity` or `alerts`.
pub const FRAUD_CONFIG: &str = "fraud_config";
/// `fraud_blocklist`: partition tenant, clustering phone.
pub const BLOCKLIST: &str = "fraud_blocklist";
/// `fraud_flags`: partition tenant, clustering flag id (time-ordered).
pub const FRAUD_FLAGS: &str = "fraud_flags";
/// `business_wallets`: partition tenant, clustering business id.
pub const BUSINESS_WALLETS: &str = "business_wallets";
/// `wallet_txns`: partition `tenant|business`, clustering the wallet's transaction sequence.
pub const WALLET_TXNS: &str = "wallet_txns";
/// `wallet_refs`: partition `tenant|business`, clustering a recharge reference or send id.
pub const WALLET_REFS: &str = "wallet_refs";
/// `channel_queue`: partition `<sms|chat|push>_queue_<YYYYMMDD>`, clustering `tenant|send id`.
pub const CHANNEL_QUEUE: &str = "channel_queue";
/// `rewards`: partition tenant, clustering reward id: the brand's catalogue.
pub const REWARDS: &str = "rewards";
/// `pending_coupons`: partition tenant, clustering order id: the coupon waiting for that order.
pub const PENDING_COUPONS: &str = "pending_coupons";
/// `coupons`: partition tenant, clustering coupon code.
pub const COUPONS: &str = "coupons";
/// `loyalty_otps`: partition `tenant|phone`, clustering `otp`: the customer's current one-time
/// password (hashed), its expiry, attempts, and a verification window.
pub const OTPS: &str = "loyalty_otps";
/// `loyalty_redemptions`: partition `tenant|phone`, clustering order id.
pub const REDEMPTIONS: &str = "loyalty_redemptions";
/// `pending_redemptions`: partition `due`, clustering `expires_at|tenant|order id`: POS
/// redemptions waiting for their order, in the order the revoke job needs them.
pub const PENDING_REDEMPTIONS: &str = "pending_redemptions";
/// `loyalty_rules`: partition tenant, clustering `rules`.
pub const LOYALTY_RULES: &str = "loyalty_rules";
/// `loyalty_ledger`: partition `tenant|phone`, clustering the customer's ledger sequence number.
pub const LOYALTY_LEDGER: &str = "loyalty_ledger";

/// `loyalty_daily`: partition `tenant|YYYY-MM-DD` (IST), clustering `phone|ledger sequence`: a
/// copy of each ledger entry's kind and points under its day, so a day-wise report reads one
/// partition per day. Keyed like the ledger row, so a retried write replaces itself.
pub const LOYALTY_DAILY: &str = "loyalty_daily";
/// `points_expiry`: partition `due`, clustering `expires_at|tenant|phone`: who holds points that
/// expire when, in the order the expiry job needs them.
pub const POINTS_EXPIRY: &str = "points_expiry";

/// `wallet_pricing`: partition tenant, clustering `pricing`: the brand's price table.
pub const WALLET_PRICING: &str = "wallet_pricing";
/// `campaign_journeys`: partition tenant, clustering the journey id.
pub const CAMPAIGN_JOURNEYS: &str = "campaign_journeys";
/// `journey_types`: partition `brand|<tenant>`, clustering the type id (types a brand added by
/// `/crm_api/autoCampaign`); partition `all` holds, read-only, types added before they belonged to a brand.
pub const JOURNEY_TYPES: &str = "journey_types";
/// `journey_brands`: partition `all`, clustering tenant: the brands with journey configurations.
pub const JOURNEY_BRANDS: &str = "journey_brands";
/// `journey_sends`: partition `tenant|journey`, clustering `phone|occasion`: each decision.
pub const JOURNEY_SENDS: &str = "journey_sends";
/// `journey_runs`: partition tenant, clustering `journey|day`: the send history.
pub const JOURNEY_RUNS: &str = "journey_runs";
/// `journey_settings`: partition tenant, clustering `settings`: quiet hours, frequency cap.
pub const JOURNEY_SETTINGS: &str = "journey_settings";
/// `campaign_tags`: partition tenant, clustering tag id: the brand's campaign tags.
pub const CAMPAIGN_TAGS: &str = "campaign_tags";
/// `open_carts`: partition `all`, clustering `tenant|outlet/orderId`: carts that may be abandoned.
pub const OPEN_CARTS: &str = "open_carts";
/// `auto_campaign_roi`: partition `tenant|journey`, clustering `day|mode`: attributed ROI.
pub const CAMPAIGN_ROI: &str = "auto_campaign_roi";
/// `bulk_campaigns`: partition tenant, clustering the campaign id (12 digits): bulk campaigns.
pub const BULK_CAMPAIGNS: &str = "bulk_campaigns";
/// `business_configs`: partition tenant, clustering the business (`0` for the brand's own
/// record): the flags the daily sync sets (`auto_campaign`).
pub const BUSINESS_CONFIGS: &str = "business_configs";
/// `service_secrets`: partition `all`, clustering the secret's name: secrets engage made itself
/// (the link-signing secret when `ENGAGE_LINK_SECRET` is unset).
pub const SERVICE_SECRETS: &str = "service_secrets";

/// `bill_configs`: partition tenant, clustering business id: bill configurations.
pub const BILL_CONFIGS: &str = "bill_configs";
/// `bill_widgets`: partition tenant, clustering the mapping id: bill widgets.
pub const BILL_WIDGETS: &str = "bill_widgets";
/// `digital_bills`: partition tenant, clustering bill id.
pub const DIGITAL_BILLS: &str = "digital_bills";
/// `bill_codes`: partition the bill id's first two characters, clustering bill id: its brand.
pub const BILL_CODES: &str = "bill_codes";
/// `bill_aliases`: partition tenant, clustering a link service's bill id: the bill's own id.
pub const BILL_ALIASES: &str = "bill_aliases";
/// `bill_funnel`: partition tenant, clustering `IST day|outlet`: the daily funnel.
pub const BILL_FUNNEL: &str = "bill_funnel";
/// `bill_skips`: partition `tenant|IST day`, clustering `outlet|orderId`: skipped orders.
pub const BILL_SKIPS: &str = "bill_skips";
/// `bill_brands`: partition `all`, clustering tenant: brands with bill configurations.
pub const BILL_BRANDS: &str = "bill_brands";

/// `feedback_configs`: partition tenant, clustering outlet (`0`: the brand's own).
pub const FEEDBACK_CONFIGS: &str = "feedback_configs";
/// `feedback_requests`: partition tenant, clustering `outlet|orderId`.
pub const FEEDBACK_REQUESTS: &str = "feedback_requests";
/// `feedback_funnel`: partition tenant, clustering `IST day|outlet`.
pub const FEEDBACK_FUNNEL: &str = "feedback_funnel";
/// `ratings`: partition tenant, clustering `outlet|orderId|source`.
pub const RATINGS: &str = "ratings";

/// `nps_responses`: partition tenant, clustering the NPS id.
pub const NPS_RESPONSES: &str = "nps_responses";
/// `feedback_brands`: partition `all`, clustering tenant.
pub const FEEDBACK_BRANDS: &str = "feedback_brands";

/// `feedback_recoveries`: partition tenant, clustering `outlet|orderId`.
pub const FEEDBACK_RECOVERIES: &str = "feedback_recoveries";

/// `store_reviews`: partition `tenant|<store>`, clustering review id.
pub const STORE_REVIEWS: &str = "store_reviews";
/// `review_markers`: partition tenant, clustering the store.
pub const REVIEW_MARKERS: &str = "review_markers";

/// `stats_days`.
pub const STATS_DAYS: &str = "stats_days";
/// `stats_special_days`.
pub const STATS_SPECIAL_DAYS: &str = "stats_special_days";
/// `access_settings`: partition tenant, clustering the setting's name (`open_routes`).
pub const ACCESS_SETTINGS: &str = "access_settings";
/// `legacy_feedback_sms`: partition `all`, clustering `tenant|id`.
pub const LEGACY_FEEDBACK_SMS: &str = "legacy_feedback_sms";
