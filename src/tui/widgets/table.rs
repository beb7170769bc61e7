//! A virtualised table: only the rows that fit are built, so a list of 100,000
//! workloads costs the same per frame as a list of twenty.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Row, Table};

use crate::tui::Theme;
use crate::tui::app::ListState;

/// What a table shows; rows are produced on demand by position.
pub struct TableSpec<'a> {
    pub title: Line<'a>,
    pub header: Vec<&'a str>,
    pub widths: Vec<Constraint>,
    /// Number of rows after filtering.
    pub len: usize,
    pub list: ListState,
    /// Shown when there are no rows.
    pub empty: &'a str,
}

/// Column widths as the table will lay them out inside a bordered `area` (one cell
/// of spacing), so cells can be truncated with "…" instead of being cut silently.
pub fn resolve_widths(area: Rect, constraints: &[Constraint]) -> Vec<u16> {
    let inner = Rect {
        width: area.width.saturating_sub(2),
        ..area
    };
    Layout::horizontal(constraints.iter().copied())
        .spacing(1)
        .split(inner)
        .iter()
        .map(|r| r.width)
        .collect()
}

/// The first visible position: the stored offset, corrected so the selection shows.
pub fn visible_offset(list: ListState, len: usize, height: usize) -> usize {
    let height = height.max(1);
    let mut offset = list.offset.min(len.saturating_sub(1));
    if list.selected < offset {
        offset = list.selected;
    } else if list.selected >= offset + height {
        offset = list.selected + 1 - height;
    }
    offset
}

/// Draws the table, calling `row(position)` for the visible positions only.
pub fn render<'a>(
    frame: &mut Frame,
    area: Rect,
    theme: &Theme,
    spec: TableSpec<'a>,
    row: impl Fn(usize) -> Row<'a>,
) {
    let counter = if spec.len == 0 {
        String::from(" 0 ")
    } else {
        format!(" {}/{} ", spec.list.selected + 1, spec.len)
    };
    let block = Block::bordered()
        .border_style(theme.border)
        .title(spec.title.style(theme.title))
        .title_bottom(Line::from(counter).style(theme.muted).right_aligned());
    if spec.len == 0 {
        let text = Paragraph::new(Line::from(spec.empty).style(theme.muted)).block(block);
        frame.render_widget(text, area);
        return;
    }
    // Borders and the header row take three lines.
    let height = usize::from(area.height.saturating_sub(3));
    let offset = visible_offset(spec.list, spec.len, height);
    let end = (offset + height).min(spec.len);
    let rows: Vec<Row> = (offset..end)
        .map(|pos| {
            let r = row(pos);
            if pos == spec.list.selected {
                r.style(theme.selection)
            } else {
                r
            }
        })
        .collect();
    let table = Table::new(rows, spec.widths)
        .header(Row::new(spec.header).style(theme.header))
        .column_spacing(1)
        .style(theme.text)
        .block(block);
    frame.render_widget(table, area);
}

/// One column to size to its content.
#[derive(Clone, Copy, Debug)]
pub struct Fit {
    /// Widest cell, header included.
    pub content: usize,
    /// Never narrower than this (unless the content is).
    pub min: usize,
}

/// Sizes columns to their content inside `avail` cells (one cell between columns).
/// When they do not fit, the column with the most room above its minimum gives up a
/// cell, repeatedly. The last column (the verdict) gets whatever remains. `None` when
/// even the minimums do not fit.
pub fn fit_columns(avail: usize, cols: &[Fit]) -> Option<Vec<usize>> {
    let (last, rest) = cols.split_last()?;
    let gaps = cols.len() - 1;
    let last_min = last.content.min(last.min);
    let budget = avail.checked_sub(gaps + last_min)?;
    let mut w: Vec<usize> = rest.iter().map(|c| c.content).collect();
    let mut total: usize = w.iter().sum();
    while total > budget {
        let widest = (0..w.len())
            .filter(|&i| w[i] > rest[i].min.min(rest[i].content))
            .max_by_key(|&i| (w[i] - rest[i].min.min(rest[i].content), w[i]))?;
        w[widest] -= 1;
        total -= 1;
    }
    w.push(avail - gaps - total);
    Some(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_content_and_the_last_takes_the_rest() {
        let f = |content, min| Fit { content, min };
        assert_eq!(
            fit_columns(40, &[f(8, 8), f(10, 6), f(5, 5)]),
            Some(vec![8, 10, 20])
        );
        // Too wide: the column with room above its minimum shrinks first.
        assert_eq!(
            fit_columns(30, &[f(8, 8), f(20, 6), f(20, 8)]),
            Some(vec![8, 12, 8])
        );
        assert_eq!(fit_columns(10, &[f(8, 8), f(20, 6), f(20, 8)]), None);
    }
}
