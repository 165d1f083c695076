//! Staff CSV uploads (multipart/form-data): the blocklist upload and the bulk campaign read their
//! form fields and the CSV's `Phone` column here, so both answer bad bodies and bad rows alike.

use std::collections::BTreeMap;

use axum::extract::multipart::MultipartRejection;
use axum::extract::Multipart;

use axum::http::header::CONTENT_LENGTH;
use axum::http::HeaderMap;

use crate::platform::edge::errors::StaffError;

/// A multipart body: its text fields by name and its `file` field.
pub struct Form {
    /// Text fields (trimmed), by name.
    pub fields: BTreeMap<String, String>,
    /// The `file` field's bytes.
    pub file: Option<Vec<u8>>,
}

impl Form {
    /// Reads the whole body, at most `limit` bytes (`ENGAGE_MAX_UPLOAD_BYTES`): a larger one is the
    /// staff family's 413 naming the limit, refused from its `content-length` before it is read
    /// when it gives one. A body that is not multipart is the staff family's 400 (`expected` names
    /// the fields the route wants), not axum's text answer.
    pub async fn read(
        headers: &HeaderMap,
        multipart: Result<Multipart, MultipartRejection>,
        expected: &str,
        limit: usize,
    ) -> Result<Self, StaffError> {
        let too_large = || StaffError::too_large(limit);
        let declared = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|length| length > limit as u64) {
            return Err(too_large());
        }
        let not_multipart =
            || StaffError::invalid_message("", format!("the body is not multipart/form-data with {expected}"));
        let mut multipart = multipart.map_err(|_| not_multipart())?;
        let mut form = Form { fields: BTreeMap::new(), file: None };
        let mut read = 0usize;
        while let Some(mut field) = multipart.next_field().await.map_err(|_| not_multipart())? {
            let name = field.name().unwrap_or_default().to_owned();
            let mut bytes = Vec::new();
            while let Some(chunk) = field
                .chunk()
                .await
                .map_err(|_| StaffError::invalid_message("", "a multipart field could not be read"))?
            {
                read += chunk.len();
                if read > limit {
                    return Err(too_large());
                }
                bytes.extend_from_slice(&chunk);
            }
            if name == "file" {
                form.file = Some(bytes);
            } else {
                form.fields.insert(name, String::from_utf8_lossy(&bytes).trim().to_owned());
            }
        }
        Ok(form)
    }

    /// The first non-empty field of `names`.
    pub fn field(&self, names: &[&str]) -> Option<String> {
        names.iter().find_map(|n| self.fields.get(*n)).filter(|v| !v.is_empty()).cloned()
    }

    /// The rows of the CSV `file`: each data row's line number (the header is line 1), its
    /// `Phone` value (or why the row is unreadable) and the row's other columns by header name.
    pub fn phone_rows(&self) -> Result<Vec<CsvRow>, StaffError> {
        let Some(file) = &self.file else {
            return Err(StaffError::invalid_message("/file", "the CSV file field \"file\" is missing"));
        };
        let mut reader = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(file.as_slice());
        let headers: Vec<String> = reader
            .headers()
            .map_err(|_| StaffError::invalid_message("/file", "the file is not CSV"))?
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').to_owned())
            .collect();
        let Some(column) = headers.iter().position(|h| h.eq_ignore_ascii_case("phone")) else {
            return Err(StaffError::invalid_message("/file", "the CSV needs a column named Phone"));
        };
        Ok(reader
            .records()
            .enumerate()
            .map(|(index, record)| {
                let line = index + 2;
                match record {
                    Ok(record) => CsvRow {
                        line,
                        phone: Ok(record.get(column).unwrap_or_default().to_owned()),
                        columns: headers
                            .iter()
                            .zip(record.iter())
                            .map(|(h, v)| (h.to_lowercase(), v.to_owned()))
                            .collect(),
                    },
                    Err(error) => {
                        CsvRow { line, phone: Err(format!("unreadable row: {error}")), columns: BTreeMap::new() }
                    }
                }
            })
            .collect())
    }
}

/// A data row of an uploaded CSV.
pub struct CsvRow {
    /// Its line in the file (the header is line 1).
    pub line: usize,
    /// Its `Phone` value, or why the row could not be read.
    pub phone: Result<String, String>,
    /// Every column, by lower-case header name.
    pub columns: BTreeMap<String, String>,
}

/// The field names of a multipart body, for `/openapi.json`: a part's name is a header parameter,
/// so it is plain text (fields the route does not read are ignored).
pub fn field_name() -> serde_json::Value {
    serde_json::json!({"pattern": "^[A-Za-z0-9_]{1,64}$"})
}

/// The 413 answer of a multipart route, for `/openapi.json`.
pub fn limit_answer() -> serde_json::Value {
    serde_json::json!({"description": "{message: \"the body exceeds N bytes\"}: N is ENGAGE_MAX_UPLOAD_BYTES (default 5242880)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StaffErrorBody"}}}})
}

/// A line of the file that was refused.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct InvalidLine {
    /// Line of the file.
    pub line: usize,
    /// What it held; null when it held no number.
    pub value: Option<String>,
    /// Why it was refused.
    pub reason: String,
}
