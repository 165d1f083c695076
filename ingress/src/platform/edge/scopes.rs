//! What each request body acts on ([`Scope`]) and which of its fields name the outlet: the table
//! [`crate::platform::edge::access`] holds outlet-limited tokens to (and `/openapi.json` shows as
//! `x-engage-scope`). One line per body type of [`crate::platform::edge::requests`].

use crate::platform::edge::contract::Scope;
use crate::platform::edge::requests::*;

/// What each body acts on ([`Scope`]) and which of its fields name the outlet (the first is the one
/// an outlet-limited token fills in):
/// brand-level bodies configure or read the whole brand; outlet-level ones name the outlet they
/// act on (left out: the whole brand); customer-level ones act on one customer of the brand, and
/// any outlet they name must be the token's.
macro_rules! scope {
    ($($scope:ident: $($ty:ident $(=> [$($field:ident),+])?),* ;)*) => {$($(
        impl $ty {
            pub(super) const SCOPE: Scope = Scope::$scope;
            pub(super) const OUTLET_FIELDS: &'static [&'static str] = &[$($(stringify!($field)),+)?];
        }
    )*)*};
}

scope!(
    Tenant: LoyaltyRulesRequest, MilestonesRequest, FraudWalletRulesRequest, FraudAlertSettingsRequest,
        FraudQueryRequest => [business_id], RewardRequest, DayWiseRequest, WalletPricingRequest,
        JourneyCatalogueRequest, AutoCampaignRequest, JourneySettingsRequest, CampaignTagRequest,
        SpecialDaysRequest, ConsentSettingsRequest, SendersRequest;
    Outlet: WalletRequest => [business_id], SaveJourneyRequest => [child_business_id],
        JourneyRequest => [child_business_id], JourneyReportRequest => [business_id], BillRequest => [business_id],
        BillConfigRequest => [business_id], WidgetRequest => [business_id],
        FeedbackConfigRequest => [child_business_id], FeedbackReadRequest => [business_id, child_business_id],
        NpsDataRequest => [business_id], NpsRequest => [business_id], LegacySmsRequest => [business_id],
        StatsRequest => [business_id], BusinessConfigRequest => [business_id], PartnerTokenRequest => [business_id],
        RiderLoginRequest => [business_id], WaitingRefundsRequest => [business_id];
    Customer: CustomerDetailsRequest => [business_id], UpdateCustomerRequest => [business_id],
        RedeemPointsRequest => [outlet_id], CustomerLoyaltyRequest, IntegrationUserRequest => [business_id, outlet_id],
        CouponRequest, BillEventRequest, WidgetInsightRequest, PartnerProfileRequest, ChatCheckRequest, ConsentRequest, CustomerExportRequest;
);
