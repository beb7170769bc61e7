//! Reading a JSON `List` (`kubectl get ... -o json`) one item at a time.
//!
//! The general path decodes a whole document into a `serde_json::Value` before reading
//! it; for a dump of 78,000 objects that tree is most of the process's memory. A file that
//! is one JSON object of kind `List` (or `XList` with `items`) is read here instead: a
//! first pass reads its `kind` and `apiVersion` and the extent of each item in the text
//! (checking the syntax of the whole file, building nothing), a second pass decodes the
//! items one by one and hands each to the loader, so at most one item's `Value` is alive
//! per thread. A large List is read in two halves on two threads
//! ([`List::add_in_two_halves`]), with the result of reading it in order.
//! Anything else (several documents, not an object, a field of the wrong type) goes the
//! general way, which reports errors exactly as before: the fast path adds nothing before
//! it has decided to take the file, and the items are handled by the same code
//! ([`Loader::add_list_item`]), with the same paths in errors (`items[i]...`).

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Loader, ParseError};
use crate::model::types::Origin;

/// The List's own fields; `items` as the raw text of each item (validated, not decoded).
#[derive(Deserialize)]
struct Head<'t> {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    #[serde(borrow)]
    items: Option<Vec<&'t RawValue>>,
}

/// Lists with fewer items are read on one thread.
const PARALLEL_MIN_ITEMS: usize = 4096;

/// Reads `text` as one JSON List if it is one; `Ok(false)` means "not handled here"
/// (nothing was added).
pub(super) fn add_json_list(
    loader: &mut Loader,
    source: &str,
    text: &str,
) -> Result<bool, ParseError> {
    let text = text.trim_start_matches('\u{feff}');
    if !text.trim_start().starts_with('{') {
        return Ok(false);
    }
    // `items` that is not an array fails here too: the general path names the field
    let Ok(head) = serde_json::from_str::<Head>(text) else {
        return Ok(false);
    };
    let (Some(kind), Some(items)) = (head.kind, head.items) else {
        return Ok(false);
    };
    if !(kind == "List" || kind.ends_with("List")) {
        return Ok(false);
    }
    let list = List {
        origin: Origin {
            source: source.to_string(),
            document: 0,
        },
        kind: &kind,
        api_version: head.api_version.as_deref(),
    };
    let parallel = items.len() >= PARALLEL_MIN_ITEMS
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let read = if parallel {
        list.add_in_two_halves(loader, &items)
    } else {
        list.add_items(loader, &items, 0, None)
    };
    match read {
        Ok(()) => Ok(true),
        Err(Stop::Rejected(e)) => Err(e),
        // cannot happen after the first pass validated the text; kept as before
        Err(Stop::Invalid { added: 0, .. }) => Ok(false),
        Err(Stop::Invalid { error, .. }) => Err(ParseError {
            source: source.to_string(),
            document: Some(0),
            object: None,
            path: None,
            message: format!("invalid JSON: {error}"),
        }),
        Err(Stop::Cancelled) => unreachable!("only the second half is cancelled"),
    }
}

/// Why reading the items stopped.
enum Stop {
    /// The loader rejected an item (the error names it).
    Rejected(ParseError),
    /// An item's JSON did not decode, after `added` items.
    Invalid {
        error: serde_json::Error,
        added: usize,
    },
    /// The first half failed: the second half's work is thrown away.
    Cancelled,
}

struct List<'a> {
    origin: Origin,
    kind: &'a str,
    api_version: Option<&'a str>,
}

impl List<'_> {
    /// Decodes and reads `items` (numbered from `first`) in order, one `Value` alive at
    /// a time; stops at the first item the loader rejects, or when `cancel` is set.
    fn add_items(
        &self,
        loader: &mut Loader,
        items: &[&RawValue],
        first: usize,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<(), Stop> {
        for (n, raw) in items.iter().enumerate() {
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                return Err(Stop::Cancelled);
            }
            let item: Value = serde_json::from_str(raw.get()).map_err(|error| Stop::Invalid {
                error,
                added: first + n,
            })?;
            loader
                .add_list_item(
                    &self.origin,
                    self.kind,
                    self.api_version,
                    &item,
                    first + n,
                    "",
                    0,
                )
                .map_err(Stop::Rejected)?;
        }
        Ok(())
    }

    /// Decoding an item and reading it into the model is most of the time of a large
    /// List, and items are independent: the second half is read on another thread
    /// into a loader of its own ([`Loader::for_chunk`]) while this thread reads the first
    /// half, then appended ([`Loader::merge_chunk`]). The result is what reading the
    /// items in order gives: when the halves cannot be joined exactly (an object in
    /// both, or the second half stopped on an error) the second half is read again
    /// here, in order, after the first.
    fn add_in_two_halves(&self, loader: &mut Loader, items: &[&RawValue]) -> Result<(), Stop> {
        let mid = items.len() / 2;
        let (front, back) = items.split_at(mid);
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let (front_read, (chunk, back_read)) = std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let mut chunk = Loader::for_chunk();
                let read = self.add_items(&mut chunk, back, mid, Some(&cancel));
                (chunk, read)
            });
            let front_read = self.add_items(loader, front, 0, None);
            if front_read.is_err() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            let back = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (front_read, back)
        });
        front_read?;
        if back_read.is_ok() && loader.merge_chunk(chunk) {
            return Ok(());
        }
        self.add_items(loader, back, mid, None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Loader, documents};

    fn both(source: &str, text: &str) -> (Loader, Loader) {
        let mut streamed = Loader::new();
        assert!(super::add_json_list(&mut streamed, source, text).unwrap());
        let mut general = Loader::new();
        for (document, v) in documents::split_documents(source, text)
            .unwrap()
            .iter()
            .enumerate()
        {
            let origin = super::Origin {
                source: source.to_string(),
                document,
            };
            general.add_value(origin, v).unwrap();
        }
        (streamed, general)
    }

    #[test]
    fn a_list_reads_the_same_streamed_or_whole() {
        let text = r#"{"apiVersion": "v1", "items": [
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"x": "y"}}},
            {"apiVersion": "v1", "kind": "Mystery", "metadata": {"name": "m"}}
        ], "kind": "List", "metadata": {"resourceVersion": ""}}"#;
        let (a, b) = both("dump.json", text);
        assert_eq!(format!("{:?}", a.finish()), format!("{:?}", b.finish()));
    }

    #[test]
    fn typed_list_items_get_kind_and_api_version() {
        let text = r#"{"apiVersion": "v1", "kind": "NamespaceList",
            "items": [{"metadata": {"name": "team"}}]}"#;
        let (a, b) = both("ns.json", text);
        let (a, b) = (a.finish(), b.finish());
        assert!(a.namespaces.contains_key("team"), "{:?}", a.namespaces);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn an_item_error_names_its_index_as_before() {
        let text = r#"{"kind": "List", "apiVersion": "v1", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ok"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {}}}
        ]}"#;
        let mut l = Loader::new();
        let streamed = super::add_json_list(&mut l, "d.json", text).unwrap_err();
        let mut l = Loader::new();
        let general = l.add_value(
            super::Origin {
                source: "d.json".into(),
                document: 0,
            },
            &serde_json::from_str(text).unwrap(),
        );
        assert_eq!(Err(streamed.clone()), general);
        assert!(streamed.to_string().contains("items[1]"), "{streamed}");
    }

    fn workload(name: &str, ts: bool) -> String {
        let meta = if ts {
            format!(
                r#"{{"name": "{name}", "namespace": "team", "creationTimestamp": "2026-01-01T00:00:00Z"}}"#
            )
        } else {
            format!(r#"{{"name": "{name}", "namespace": "team"}}"#)
        };
        format!(
            r#"{{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {meta},
            "spec": {{"queueName": "lq", "priorityClassName": "high",
              "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
              "podSets": [{{"name": "main", "count": 1, "template": {{"spec": {{"containers": [
                {{"name": "c", "resources": {{"requests": {{"cpu": "1"}}}}}}]}}}}}}]}}}}"#
        )
    }

    fn job(name: &str) -> String {
        format!(
            r#"{{"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {{"name": "{name}", "namespace": "team",
              "labels": {{"kueue.x-k8s.io/queue-name": "lq"}}}},
            "spec": {{"parallelism": 1, "template": {{"spec": {{"containers": [
              {{"name": "c", "resources": {{"requests": {{"cpu": "1"}}}}}}]}}}}}}}}"#
        )
    }

    const DEPLOYMENT: &str =
        r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}"#;
    const CLASS: &str = r#"{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high"}, "value": 100}"#;
    const BAD_NAMESPACE: &str =
        r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {}}}"#;

    /// The List of `items`, read in two halves and in order: the same state (or error).
    fn halves_as_in_order(items: &[String]) {
        let text = format!(
            r#"{{"kind": "List", "apiVersion": "v1", "items": [{}]}}"#,
            items.join(",")
        );
        let head: super::Head = serde_json::from_str(&text).unwrap();
        let raw = head.items.unwrap();
        let list = super::List {
            origin: super::Origin {
                source: "d.json".into(),
                document: 0,
            },
            kind: "List",
            api_version: Some("v1"),
        };
        let (mut halves, mut in_order) = (Loader::new(), Loader::new());
        let a = list.add_in_two_halves(&mut halves, &raw);
        let b = list.add_items(&mut in_order, &raw, 0, None);
        let err = |r: Result<(), super::Stop>| match r {
            Ok(()) => None,
            Err(super::Stop::Rejected(e)) => Some(e.to_string()),
            Err(_) => Some("stopped".to_string()),
        };
        assert_eq!(err(a), err(b), "{text}");
        assert_eq!(
            format!("{:?}", halves.finish()),
            format!("{:?}", in_order.finish()),
            "{text}"
        );
    }

    #[test]
    fn a_list_read_in_two_halves_is_the_list_read_in_order() {
        let (w, j) = (workload, job);
        // joined: fallback timestamps renumbered after the first half, notes in order
        halves_as_in_order(&[
            w("a", false),
            j("ja"),
            DEPLOYMENT.into(),
            CLASS.into(),
            w("b", false),
            j("jb"),
            w("c", true),
            DEPLOYMENT.into(),
        ]);
        // an object in both halves: the second half is read again, in order
        halves_as_in_order(&[w("a", false), j("ja"), w("b", false), w("a", false)]);
        // a duplicate within the second half replaces its first copy there
        halves_as_in_order(&[w("a", false), j("ja"), w("b", false), w("b", false)]);
        // an error in either half: the error of the first rejected item
        halves_as_in_order(&[w("a", false), j("ja"), w("b", false), BAD_NAMESPACE.into()]);
        halves_as_in_order(&[
            BAD_NAMESPACE.into(),
            j("ja"),
            w("b", false),
            BAD_NAMESPACE.into(),
        ]);
    }

    #[test]
    fn anything_else_is_left_to_the_general_path() {
        let mut l = Loader::new();
        for text in [
            r#"{"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "a"}}"#,
            r#"{"kind": "List", "items": []} {"kind": "List", "items": []}"#,
            r#"{"kind": "List", "items": 3}"#,
            r#"{"kind": 3, "items": []}"#,
            r#"[{"kind": "List", "items": []}]"#,
            "kind: List\nitems: []\n",
        ] {
            assert!(
                !super::add_json_list(&mut l, "x.json", text).unwrap(),
                "{text}"
            );
        }
        assert_eq!(
            format!("{:?}", l.finish()),
            format!("{:?}", Loader::new().finish())
        );
    }
}
