//! Action selection: which action a resource instance gets, from its prior
//! object, the provider's planned object and the planning options
//! (docs/planning/planning-behaviors.md).

use super::{Action, ActionReason};
use crate::provider::AttrPath;
use crate::state::ObjectStatus;
use crate::value::Value;

/// What action selection looks at for an instance that is in the configuration.
pub struct ActionInputs<'a> {
    /// The refreshed prior object, `None` when there is none (or it vanished).
    pub prior: Option<(&'a Value, ObjectStatus)>,
    pub planned: &'a Value,
    pub requires_replace: &'a [AttrPath],
    /// `-replace=ADDR` named this instance.
    pub replace_requested: bool,
    /// A `replace_triggered_by` reference changed.
    pub replace_triggered: bool,
    pub create_before_destroy: bool,
}

/// Picks the action and reason for an instance declared in configuration.
pub fn select_action(inputs: &ActionInputs<'_>) -> (Action, ActionReason) {
    let Some((prior, status)) = inputs.prior else {
        return (Action::Create, ActionReason::None);
    };
    let replace = |reason| {
        let action = if inputs.create_before_destroy {
            Action::CreateThenDelete
        } else {
            Action::DeleteThenCreate
        };
        (action, reason)
    };
    if status == ObjectStatus::Tainted {
        return replace(ActionReason::ReplaceBecauseTainted);
    }
    if inputs.replace_requested {
        return replace(ActionReason::ReplaceByRequest);
    }
    if inputs.replace_triggered {
        return replace(ActionReason::ReplaceByTriggers);
    }
    let differs = prior != inputs.planned;
    if differs && !inputs.requires_replace.is_empty() {
        return replace(ActionReason::ReplaceBecauseCannotUpdate);
    }
    if differs {
        (Action::Update, ActionReason::None)
    } else {
        (Action::NoOp, ActionReason::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::PathStep;

    fn inputs<'a>(
        prior: Option<(&'a Value, ObjectStatus)>,
        planned: &'a Value,
        rr: &'a [AttrPath],
    ) -> ActionInputs<'a> {
        ActionInputs {
            prior,
            planned,
            requires_replace: rr,
            replace_requested: false,
            replace_triggered: false,
            create_before_destroy: false,
        }
    }

    #[test]
    fn selects_actions_per_planning_rules() {
        let a = Value::object([("name", Value::from("a"))]);
        let b = Value::object([("name", Value::from("b"))]);
        let rr = vec![vec![PathStep::Key("name".into())]];
        assert_eq!(select_action(&inputs(None, &a, &[])).0, Action::Create);
        assert_eq!(
            select_action(&inputs(Some((&a, ObjectStatus::Ready)), &a, &[])).0,
            Action::NoOp
        );
        assert_eq!(
            select_action(&inputs(Some((&a, ObjectStatus::Ready)), &b, &[])).0,
            Action::Update
        );
        assert_eq!(
            select_action(&inputs(Some((&a, ObjectStatus::Ready)), &b, &rr)),
            (
                Action::DeleteThenCreate,
                ActionReason::ReplaceBecauseCannotUpdate
            )
        );
        assert_eq!(
            select_action(&inputs(Some((&a, ObjectStatus::Tainted)), &a, &[])),
            (
                Action::DeleteThenCreate,
                ActionReason::ReplaceBecauseTainted
            )
        );
        let mut cbd = inputs(Some((&a, ObjectStatus::Ready)), &b, &rr);
        cbd.create_before_destroy = true;
        assert_eq!(select_action(&cbd).0, Action::CreateThenDelete);
    }
}
