//! The engine's input, kept current from store events: each changed object is parsed
//! on its own with the model's parser and swapped into one [`ClusterState`], so a
//! scheduling cycle never re-parses the whole store.
//!
//! Jobs and Pods are not mirrored: the simulator creates real Workload objects for
//! jobs (so the parser must not derive pending workloads from them), and the engine
//! does not look at pods. Finished Workloads are dropped (they hold no quota).

use serde_json::Value;

use crate::model::parse::{Loader, ParseError};
use crate::model::{ClusterState, Origin};
use crate::sim::resources::ResourceKey;
use crate::sim::store::{EventType, StoreEvent};

use super::json;

/// The mirrored state.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    pub state: ClusterState,
}

/// Parses one object on its own.
pub(crate) fn parse_one(obj: &Value) -> Result<ClusterState, ParseError> {
    let mut loader = Loader::new();
    loader.add_value(
        Origin {
            source: "simulated cluster".into(),
            document: 0,
        },
        obj,
    )?;
    Ok(loader.finish())
}

impl Mirror {
    /// Applies one store event. Resources the engine does not read are ignored.
    pub fn apply(&mut self, ev: &StoreEvent) -> Result<(), ParseError> {
        let obj: &Value = &ev.object;
        let name = json::name(obj).to_string();
        let ns = json::namespace(obj).to_string();
        let st = &mut self.state;
        let res = &ev.resource;
        // Remove the old entry first; a parse failure then leaves it out.
        if *res == ResourceKey::RESOURCE_FLAVORS {
            st.resource_flavors.remove(&name);
        } else if *res == ResourceKey::CLUSTER_QUEUES {
            st.cluster_queues.remove(&name);
        } else if *res == ResourceKey::COHORTS {
            st.cohorts.remove(&name);
        } else if *res == ResourceKey::LOCAL_QUEUES {
            st.local_queues.remove(&(ns.clone(), name.clone()));
        } else if *res == ResourceKey::PRIORITY_CLASSES {
            st.priority_classes.remove(&name);
        } else if *res == ResourceKey::WORKLOAD_PRIORITY_CLASSES {
            st.workload_priority_classes.remove(&name);
        } else if *res == ResourceKey::NAMESPACES {
            st.namespaces.remove(&name);
        } else if *res == ResourceKey::NODES {
            st.nodes.remove(&name);
        } else if *res == ResourceKey::WORKLOADS {
            st.workloads.remove(&(ns.clone(), name.clone()));
        } else {
            return Ok(());
        }
        if ev.event_type == EventType::Deleted {
            return Ok(());
        }
        let parsed = parse_one(obj)?;
        st.resource_flavors.extend(parsed.resource_flavors);
        st.cluster_queues.extend(parsed.cluster_queues);
        st.cohorts.extend(parsed.cohorts);
        st.local_queues.extend(parsed.local_queues);
        st.priority_classes.extend(parsed.priority_classes);
        st.workload_priority_classes
            .extend(parsed.workload_priority_classes);
        st.namespaces.extend(parsed.namespaces);
        st.nodes.extend(parsed.nodes);
        st.workloads.extend(
            parsed
                .workloads
                .into_iter()
                .filter(|(_, w)| !w.is_finished()),
        );
        Ok(())
    }
}
