//! Errors that name exactly where a manifest went wrong.

use std::fmt;

/// A manifest could not be read: names the file, the document, the object and the field.
///
/// Displayed as
/// `cluster-queue.yaml: document 2 (ClusterQueue/hyperpod-global-queue): spec.resourceGroups[0]...: invalid quantity "32x": unknown suffix`.
/// The displayed document number is one-based (the first document in a file is
/// "document 1"), while [`ParseError::document`] is zero-based like [`crate::model::Origin`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// File path or source description.
    pub source: String,
    /// Zero-based document index within the source, when the error is inside one.
    pub document: Option<usize>,
    /// `Kind/name` (or just `Kind`) of the object, when known.
    pub object: Option<String>,
    /// Field path inside the document, e.g. `spec.resourceGroups[0].flavors`.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error about a whole source (unreadable file, bad directory).
    pub fn source_error(source: &str, message: impl Into<String>) -> Self {
        ParseError {
            source: source.to_string(),
            document: None,
            object: None,
            path: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(doc) = self.document {
            write!(f, ": document {}", doc + 1)?;
        }
        if let Some(object) = &self.object {
            write!(f, " ({object})")?;
        }
        if let Some(path) = self.path.as_deref().filter(|p| !p.is_empty()) {
            write!(f, ": {path}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ParseError {}

/// An error at a field path, before the file/document context is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Result of reading one field or object.
pub(crate) type FieldResult<T> = Result<T, FieldError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_every_part() {
        let e = ParseError {
            source: "cq.yaml".into(),
            document: Some(1),
            object: Some("ClusterQueue/q".into()),
            path: Some("spec.cohort".into()),
            message: "expected a string, found a list".into(),
        };
        assert_eq!(
            e.to_string(),
            "cq.yaml: document 2 (ClusterQueue/q): spec.cohort: expected a string, found a list"
        );
        let e = ParseError::source_error("x.yaml", "cannot read: gone");
        assert_eq!(e.to_string(), "x.yaml: cannot read: gone");
    }
}
