//! The answers to the digital-bill questions: opens, clicks and downloads counted, the lists and the MIS, configurations and widgets.

use crate::capabilities::business;
use crate::domain::time::ist_day;
use crate::keys;
use crate::query::{within, QueryError};
use crate::repo::DIGITAL_BILLS;
use crate::tenant_core::Tenant;
use chrono::{DateTime, Utc};

#[allow(unused_imports)]
use super::*;

/// Applies `change` to a known bill and writes it (with the writes `change` answers after it);
/// `counted: false` for an unknown bill, or when `change` answers `None` (nothing to count).
pub(super) async fn touch(
    tenant: &mut Tenant,
    bill_id: &str,
    change: impl FnOnce(&mut Bill) -> Option<Vec<engage_storage::WriteOp>>,
) -> Result<Counted, QueryError> {
    let Some(mut bill) = load_bill(tenant, bill_id).await? else {
        metrics::counter!("engage_bill_events_total", "outcome" => "unknown_bill").increment(1);
        return Ok(Counted { counted: false, bill: None, branding: Default::default() });
    };
    let Some(extra) = change(&mut bill) else {
        metrics::counter!("engage_bill_events_total", "outcome" => "unknown_widget").increment(1);
        return Ok(Counted { counted: false, bill: Some(bill), branding: Default::default() });
    };
    let mut ops = vec![keys::digital_bill(&tenant.id, bill_id).put(&bill)];
    ops.extend(extra);
    tenant.batch(ops).await?;
    metrics::counter!("engage_bill_events_total", "outcome" => "counted").increment(1);
    Ok(Counted { counted: true, bill: Some(bill), branding: Default::default() })
}

/// An open: `clicked` + 1; the day's funnel `total_clicks` + 1, and `unique_clicks` + 1 when it is
/// the bill's first open (behaviour 7).
pub(super) async fn open(tenant: &mut Tenant, bill_id: &str, now: DateTime<Utc>) -> Result<Counted, QueryError> {
    let Some(bill) = load_bill(tenant, bill_id).await? else { return touch(tenant, bill_id, |_| None).await };
    let mut row = funnel(tenant, &ist_day(now), &bill.child_business_id).await?;
    row.total_clicks += 1;
    let mut bill = bill;
    if bill.clicked == 0 {
        row.unique_clicks += 1;
    }
    bill.clicked += 1;
    tenant.batch(vec![keys::digital_bill(&tenant.id, bill_id).put(&bill), put_funnel(tenant, row, now)]).await?;
    metrics::counter!("engage_bill_events_total", "outcome" => "counted").increment(1);
    let branding = branding(tenant, &bill.child_business_id).await?;
    Ok(Counted { counted: true, bill: Some(bill), branding })
}

pub(super) async fn customers(
    tenant: &Tenant,
    business: Option<String>,
    page: u64,
    start: Option<String>,
    end: Option<String>,
) -> Result<BillPage, QueryError> {
    let mut bills = Vec::new();
    tenant
        .repo()
        .visit(DIGITAL_BILLS, &tenant.id, |bill: Bill| {
            let day = ist_day(bill.sent_at);
            if business.as_ref().is_none_or(|b| *b == bill.child_business_id)
                && within(&day, start.as_deref(), end.as_deref())
            {
                bills.push(bill);
            }
        })
        .await?;
    bills.sort_by(|a, b| b.sent_at.cmp(&a.sent_at).then_with(|| a.bill_id.cmp(&b.bill_id)));
    Ok(BillPage::of(bills, page, BILL_PAGE))
}

pub(super) async fn mis(
    tenant: &Tenant,
    business: Option<String>,
    start: String,
    end: String,
) -> Result<Mis, QueryError> {
    let days = funnel_rows(tenant, business.as_deref(), &start, &end).await?;
    let mut totals = Funnel { parent_business_id: tenant.id.clone(), ..Funnel::default() };
    totals.child_business_id = business.unwrap_or_default();
    for day in &days {
        totals.add(day);
    }
    Ok(Mis { opening_percentage: totals.opening_percentage(), totals, days })
}

pub(super) async fn save_config(tenant: &mut Tenant, mut config: LinkConfig) -> Result<LinkConfig, QueryError> {
    let key = keys::bill_config(&tenant.id, &config.business_id);
    if let Some(old) = tenant.repo().get::<LinkConfig>(&key).await? {
        config.inserted_at = old.inserted_at;
    }
    let ops = vec![key.put(&config), keys::bill_tenant(&tenant.id).put(&serde_json::json!({}))];
    tenant.cache.forget::<BillConfigs>();
    tenant.batch(ops).await?;
    Ok(config)
}

pub(super) async fn set_status(
    tenant: &mut Tenant,
    business: String,
    status: u8,
    now: DateTime<Utc>,
) -> Result<LinkConfig, QueryError> {
    let key = keys::bill_config(&tenant.id, &business);
    let Some(mut config) = tenant.repo().get::<LinkConfig>(&key).await? else { return Err(QueryError::NotFound) };
    config.status = status;
    config.updated_at = now;
    // business_configs: `0` is the brand's own record, as the journeys' flag sync writes it
    let mut flags = business::config(tenant, if config.brand_level() { "0" } else { &business }).await?;
    flags.digital_bill = Some(status);
    tenant.cache.forget::<BillConfigs>();
    tenant.batch(vec![key.put(&config), business::put(tenant, &flags)]).await?;
    Ok(config)
}

pub(super) async fn config_view(tenant: &mut Tenant, business: String) -> Result<ConfigView, QueryError> {
    let all = configs(tenant).await?;
    let config = all.get(&business).cloned();
    let inherited = if config.is_none() { all.get(&tenant.id).filter(|c| c.brand_level()).cloned() } else { None };
    let widgets = widgets(tenant).await?.into_iter().filter(|w| w.business_id == business).collect();
    Ok(ConfigView { config, inherited, widgets })
}

pub(super) fn apply_fields(widget: &mut WidgetMapping, fields: WidgetFields) {
    if let Some(sequence) = fields.sequence {
        widget.sequence = sequence;
    }
    if let Some(title) = fields.title {
        widget.title = title;
    }
    if let Some(value) = fields.value {
        widget.value = value;
    }
    if let Some(link) = fields.static_banner_link {
        widget.static_banner_link = link;
    }
    if let Some(status) = fields.status {
        widget.status = status;
    }
}

pub(super) async fn add_widget(
    tenant: &mut Tenant,
    business: String,
    widget_id: u32,
    fields: WidgetFields,
    now: DateTime<Utc>,
) -> Result<WidgetMapping, QueryError> {
    let Some(kind) = widget_kind(widget_id) else {
        return Err(QueryError::Invalid(format!("/widget_id: {widget_id} is not in the widget catalogue (1 to 6)")));
    };
    let all = widgets(tenant).await?;
    if all.iter().any(|w| w.business_id == business && w.widget_id == widget_id) {
        return Err(QueryError::Duplicate(format!(
            "this business already has the {} widget; change it with /links/editWidget",
            kind.name
        )));
    }
    let parent_id = if business == tenant.id { "0".to_owned() } else { tenant.id.clone() };
    let mut widget = WidgetMapping {
        id: all.iter().map(|w| w.id).max().unwrap_or(0) + 1,
        business_id: business,
        parent_id,
        widget_id,
        sequence: all.len() as i64 + 1,
        title: kind.name.to_owned(),
        value: String::new(),
        static_banner_link: String::new(),
        status: 1,
        inserted_at: now,
    };
    apply_fields(&mut widget, fields);
    tenant.cache.forget::<BillWidgets>();
    tenant.batch(vec![keys::bill_widget(&tenant.id, widget.id).put(&widget)]).await?;
    Ok(widget)
}

pub(super) async fn edit_widget(
    tenant: &mut Tenant,
    id: u64,
    fields: WidgetFields,
) -> Result<WidgetMapping, QueryError> {
    let key = keys::bill_widget(&tenant.id, id);
    let Some(mut widget) = tenant.repo().get::<WidgetMapping>(&key).await? else { return Err(QueryError::NotFound) };
    apply_fields(&mut widget, fields);
    tenant.cache.forget::<BillWidgets>();
    tenant.batch(vec![key.put(&widget)]).await?;
    Ok(widget)
}
