//! The terminal console: app state, update, view model, views, widgets, theme.
