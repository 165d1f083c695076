//! The Monday journey health reports (spec "Journey behaviour" 13): five XLSX workbooks over the
//! last 7 IST days, one row per journey of every brand (see
//! [`crate::capabilities::journeys::JourneyHealth`]):
//!
//! | file | what |
//! |---|---|
//! | `journey-sends.xlsx` | per journey: customers sent and held out, whether it is on |
//! | `journey-skips.xlsx` | per journey and reason: customers skipped (balance, daily_cap, frequency_cap, consent, sender, no_recipient) |
//! | `journey-roi.xlsx` | per journey: messages delivered, attributed orders and revenue, revenue per customer sent |
//! | `wallet-spend.xlsx` | per journey: messages debited and their cost |
//! | `top-journeys.xlsx` | per brand: its five journeys with the most attributed revenue (then sends) |
//!
//! They are written to `<data dir>/reports/health-<from>_<to>/` and, when
//! `ENGAGE_MAIL_SERVICE_URL` is set, POSTed there as one multipart request (fields `report`,
//! `subject`, `from`, `to` and one `file` part per workbook). They send no customer messages.
//!
//! The daily digital-bill report ([`write_bills`]) is one workbook, mailed the same way with
//! `report` `digital-bills`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use rust_xlsxwriter::{Format, Workbook, XlsxError};

use crate::capabilities::bills::BillReport;
use crate::capabilities::feedback::nps::NpsResponse;
use crate::capabilities::journeys::JourneyHealth;

/// Journeys listed per brand in `top-journeys.xlsx`.
pub const TOP_JOURNEYS: usize = 5;

/// A cell.
enum Cell {
    Text(String),
    Number(f64),
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::Text(text.to_owned())
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Self {
        Cell::Number(n as f64)
    }
}

impl From<f64> for Cell {
    fn from(n: f64) -> Self {
        Cell::Number(n)
    }
}

impl From<u32> for Cell {
    fn from(n: u32) -> Self {
        Cell::Number(f64::from(n))
    }
}

impl From<Decimal> for Cell {
    fn from(n: Decimal) -> Self {
        Cell::Number(n.to_f64().unwrap_or_default())
    }
}

/// One sheet: its name, its header row, its rows.
type Sheet<'a> = (&'a str, Vec<&'a str>, Vec<Vec<Cell>>);

/// Writes one workbook of `sheets` to `path`.
fn workbook_of(path: &Path, sheets: Vec<Sheet<'_>>) -> Result<(), XlsxError> {
    book(sheets)?.save(path)
}

/// A workbook of `sheets`, each a bold header row, then its rows.
fn book(sheets: Vec<Sheet<'_>>) -> Result<Workbook, XlsxError> {
    let mut book = Workbook::new();
    let bold = Format::new().set_bold();
    for (sheet, header, rows) in sheets {
        let worksheet = book.add_worksheet();
        worksheet.set_name(sheet)?;
        for (col, title) in header.iter().enumerate() {
            worksheet.write_string_with_format(0, col as u16, *title, &bold)?;
        }
        for (index, row) in rows.into_iter().enumerate() {
            let line = index as u32 + 1;
            for (col, cell) in row.into_iter().enumerate() {
                match cell {
                    Cell::Text(text) => worksheet.write_string(line, col as u16, text)?,
                    Cell::Number(n) => worksheet.write_number(line, col as u16, n)?,
                };
            }
        }
        worksheet.autofit();
    }
    Ok(book)
}

/// Writes one workbook of one sheet.
fn workbook(path: &Path, sheet: &str, header: &[&str], rows: Vec<Vec<Cell>>) -> Result<(), XlsxError> {
    workbook_of(path, vec![(sheet, header.to_vec(), rows)])
}

/// The first columns of every report's row.
fn who(row: &JourneyHealth) -> Vec<Cell> {
    vec![
        row.parent_business_id.as_str().into(),
        row.child_business_id.as_str().into(),
        row.campaign_journey_id.as_str().into(),
        row.campaign_type.as_str().into(),
    ]
}

const WHO: [&str; 4] = ["brand", "outlet", "journey", "type"];

fn with(mut first: Vec<Cell>, rest: Vec<Cell>) -> Vec<Cell> {
    first.extend(rest);
    first
}

/// Why a report was not written or mailed; the text names the file or the service.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or folder could not be written or read.
    #[error("{path}: {error}")]
    File {
        /// Which.
        path: String,
        /// Why.
        error: String,
    },
    /// The workbook could not be built.
    #[error("{0}")]
    Workbook(String),
    /// The mail service was unreachable or refused.
    #[error("{0}")]
    Mail(String),
}

fn file_error(path: &Path, error: impl std::fmt::Display) -> ReportError {
    ReportError::File { path: path.display().to_string(), error: error.to_string() }
}

fn header(rest: &[&'static str]) -> Vec<&'static str> {
    WHO.iter().chain(rest).copied().collect()
}

/// Writes the five workbooks of `rows` (the days `from..=to`) into `dir`; answers their paths.
pub fn write_health(dir: &Path, from: &str, to: &str, rows: &[JourneyHealth]) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let span = format!("{from} to {to}");
    let mut files = Vec::new();
    let mut write = |name: &str, sheet: &str, header: &[&str], cells: Vec<Vec<Cell>>| -> Result<(), ReportError> {
        let path = dir.join(name);
        workbook(&path, sheet, header, cells).map_err(|e| file_error(&path, e))?;
        files.push(path);
        Ok(())
    };
    let sends = rows
        .iter()
        .map(|r| with(who(r), vec![if r.enabled { "on" } else { "off" }.into(), r.sent.into(), r.holdout.into()]))
        .collect();
    write("journey-sends.xlsx", "sends", &header(&["state", "sent", "holdout"]), sends)?;
    let skips = rows
        .iter()
        .flat_map(|r| r.skipped.iter().filter(|(_, n)| **n > 0).map(move |(reason, n)| (r, reason, *n)))
        .map(|(r, reason, n)| with(who(r), vec![reason.as_str().into(), n.into()]))
        .collect();
    write("journey-skips.xlsx", "skips", &header(&["reason", "customers"]), skips)?;
    let roi = rows
        .iter()
        .map(|r| {
            let per_send = if r.sent == 0 { Decimal::ZERO } else { (r.revenue / Decimal::from(r.sent)).round_dp(2) };
            with(who(r), vec![r.delivered.into(), r.orders.into(), r.revenue.into(), per_send.into()])
        })
        .collect();
    write("journey-roi.xlsx", "roi", &header(&["delivered", "orders", "revenue", "revenue per customer sent"]), roi)?;
    let spend = rows.iter().map(|r| with(who(r), vec![r.messages.into(), r.spend.into()])).collect();
    write("wallet-spend.xlsx", "spend", &header(&["messages", "spend"]), spend)?;
    let mut by_tenant: BTreeMap<&str, Vec<&JourneyHealth>> = BTreeMap::new();
    for row in rows {
        by_tenant.entry(&row.parent_business_id).or_default().push(row);
    }
    let mut top = Vec::new();
    for journeys in by_tenant.values_mut() {
        journeys.sort_by(|a, b| b.revenue.cmp(&a.revenue).then(b.sent.cmp(&a.sent)));
        for (rank, r) in journeys.iter().take(TOP_JOURNEYS).enumerate() {
            top.push(with(
                vec![Cell::Number(rank as f64 + 1.0)],
                with(who(r), vec![r.revenue.into(), r.orders.into(), r.sent.into()]),
            ));
        }
    }
    let top_header: Vec<&str> = ["rank"].into_iter().chain(header(&["revenue", "orders", "sent"])).collect();
    write("top-journeys.xlsx", "top journeys", &top_header, top)?;
    tracing::info!(span, files = files.len(), journeys = rows.len(), "journey health reports written");
    Ok(files)
}

/// POSTs the workbooks to the mail service (multipart; `Authorization: Bearer <token>` when set).
/// What a mailed report says about itself.
pub struct Letter<'a> {
    /// `journey-health`, `digital-bills`.
    pub report: &'a str,
    /// The subject line.
    pub subject: String,
    /// First day covered.
    pub from: &'a str,
    /// Last day covered.
    pub to: &'a str,
}

pub async fn mail(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    letter: &Letter<'_>,
    files: &[PathBuf],
) -> Result<(), ReportError> {
    let mut form = reqwest::multipart::Form::new()
        .text("report", letter.report.to_owned())
        .text("subject", letter.subject.clone())
        .text("from", letter.from.to_owned())
        .text("to", letter.to.to_owned());
    for file in files {
        let bytes = tokio::fs::read(file).await.map_err(|e| file_error(file, e))?;
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(name)
            .mime_str("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
            .map_err(|e| ReportError::Mail(e.to_string()))?;
        form = form.part("file", part);
    }
    let mut request = client.post(url).multipart(form);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| ReportError::Mail(format!("mail service unreachable: {e}")))?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(ReportError::Mail(format!("mail service answered {}", response.status())))
    }
}

/// The daily digital-bill workbook (`digital-bills.xlsx` in `dir`) of the brands' `reports` (of
/// one IST day), with three sheets:
///
/// | sheet | one row per | columns |
/// |---|---|---|
/// | `funnel` | brand and outlet | bills sent, SMS, chat, opens, unique opens, opening % on the day, then bills sent and opening % 7 and 14 days earlier |
/// | `skips` | brand, outlet and reason | orders skipped that day |
/// | `unsent` | business with bills on (or orders waiting) that sent none | the reason (wallet balance below 0.30, no configuration, …) |
pub fn write_bills(dir: &Path, reports: &[BillReport]) -> Result<PathBuf, ReportError> {
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let path = dir.join("digital-bills.xlsx");
    let funnel = reports
        .iter()
        .flat_map(|r| r.funnel.iter())
        .map(|f| {
            vec![
                f.parent_business_id.as_str().into(),
                f.child_business_id.as_str().into(),
                f.day.total_bill_sent.into(),
                f.day.total_sms_sent.into(),
                f.day.total_chat_sent.into(),
                f.day.total_clicks.into(),
                f.day.unique_clicks.into(),
                f.day.opening_percentage().into(),
                f.week_before.total_bill_sent.into(),
                f.week_before.opening_percentage().into(),
                f.two_weeks_before.total_bill_sent.into(),
                f.two_weeks_before.opening_percentage().into(),
            ]
        })
        .collect();
    let skips = reports
        .iter()
        .flat_map(|r| r.skips.iter())
        .map(|s| {
            vec![
                s.parent_business_id.as_str().into(),
                s.child_business_id.as_str().into(),
                s.reason.as_str().into(),
                s.count.into(),
            ]
        })
        .collect();
    let unsent = reports
        .iter()
        .flat_map(|r| r.unsent.iter())
        .map(|u| vec![u.parent_business_id.as_str().into(), u.business_id.as_str().into(), u.reason.as_str().into()])
        .collect();
    let sheets = vec![
        (
            "funnel",
            vec![
                "parent_business_id",
                "child_business_id",
                "bills sent",
                "sms sent",
                "chat sent",
                "opens",
                "unique opens",
                "opening %",
                "bills sent 7 days before",
                "opening % 7 days before",
                "bills sent 14 days before",
                "opening % 14 days before",
            ],
            funnel,
        ),
        ("skips", vec!["parent_business_id", "child_business_id", "reason", "orders"], skips),
        ("unsent", vec!["parent_business_id", "business_id", "reason"], unsent),
    ];
    workbook_of(&path, sheets).map_err(|e| file_error(&path, e))?;
    Ok(path)
}

/// The NPS export (`/crm_api/download/nps/data`): one sheet `nps`, one row per response, newest
/// first: `nps_id`, `businessId`, `mobileNo`, `rating`, `order_id`, `insertedAt` (RFC 3339, UTC),
/// `validTill`, `source`, and the answers as JSON text.
pub fn nps_workbook(rows: &[NpsResponse]) -> Result<Vec<u8>, ReportError> {
    let header = vec![
        "nps_id",
        "businessId",
        "mobileNo",
        "rating",
        "order_id",
        "insertedAt",
        "validTill",
        "source",
        "questions",
    ];
    let cells = rows
        .iter()
        .map(|row| {
            vec![
                row.nps_id.as_str().into(),
                row.businessId.as_str().into(),
                row.mobileNo.as_str().into(),
                u32::from(row.rating).into(),
                row.order_id.as_str().into(),
                Cell::Text(row.insertedAt.to_rfc3339()),
                Cell::Text(row.validTill.to_rfc3339()),
                row.source.as_str().into(),
                Cell::Text(serde_json::to_string(&row.questions).unwrap_or_default()),
            ]
        })
        .collect();
    book(vec![("nps", header, cells)])
        .and_then(|mut book| book.save_to_buffer())
        .map_err(|e| ReportError::Workbook(e.to_string()))
}
