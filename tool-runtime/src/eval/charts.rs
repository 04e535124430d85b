//! Bar charts drawn by plotters' SVG backend, to be inlined in the HTML page.

use plotters::prelude::*;

/// The colors of a chart's series, in order (colorblind-safe blue, orange, vermilion, green).
const PALETTE: [RGBColor; 4] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
];

/// A bar chart of categories, each with one bar per series.
pub(crate) struct BarChart<'a> {
    pub(crate) title: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) categories: Vec<String>,
    /// Each series: its name and one value per category.
    pub(crate) series: Vec<(&'a str, Vec<f64>)>,
}

impl BarChart<'_> {
    /// The chart as an `<svg>` element, or why it could not be drawn.
    pub(crate) fn svg(&self) -> Result<String, String> {
        let mut svg = String::new();
        self.draw(&mut svg).map_err(|error| error.to_string())?;
        Ok(svg)
    }

    fn draw(&self, svg: &mut String) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
        // A chart without categories still draws its axes, over one empty slot.
        let empty = [String::from("(none)")];
        let categories: &[String] = if self.categories.is_empty() {
            &empty
        } else {
            &self.categories
        };
        let per_category = self.series.len().max(1);
        // Each category takes one row per series and one empty row between groups.
        let stride = per_category + 1;
        let slots = categories.len() * stride;
        let highest = self
            .series
            .iter()
            .flat_map(|(_, values)| values.iter().copied())
            .fold(0.0_f64, f64::max);
        // Room to the right of the longest bar; more with a legend, in the upper right.
        let headroom = if self.series.len() > 1 { 1.35 } else { 1.1 };
        let top = if highest > 0.0 {
            highest * headroom
        } else {
            1.0
        };

        // Bars lie horizontally, so a tool's name is written whole beside its bars: about 7
        // pixels a character at 12 px.
        let longest = categories
            .iter()
            .map(|name| name.chars().count())
            .max()
            .unwrap_or(0);
        let label_area = u32::try_from(longest * 7 + 16)
            .unwrap_or(u32::MAX)
            .clamp(56, 220);
        let height = u32::try_from(slots * 16 + 110)
            .unwrap_or(u32::MAX)
            .clamp(220, 1400);
        let root = SVGBackend::with_string(svg, (640, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_area)
            .build_cartesian_2d(0.0..top, (0..slots as i32).into_segmented())?;
        // Rows are counted from the bottom: the first category is drawn on top.
        let row =
            |category: usize, series: usize| (slots - 1 - (category * stride + series)) as i32;
        let label = |value: &SegmentValue<i32>| match value {
            SegmentValue::CenterOf(slot) | SegmentValue::Exact(slot) => {
                // The axis also names the end of the last row: nothing to write there.
                match usize::try_from(*slot) {
                    Ok(slot) if slot < slots => {
                        let from_top = slots - 1 - slot;
                        if from_top % stride == (per_category - 1) / 2 {
                            categories
                                .get(from_top / stride)
                                .cloned()
                                .unwrap_or_default()
                        } else {
                            String::new()
                        }
                    }
                    _ => String::new(),
                }
            }
            SegmentValue::Last => String::new(),
        };
        // Counts read as whole numbers on the axis (`16`, not `16.0`).
        let value_label = |value: &f64| {
            if value.fract().abs() < 1e-9 {
                format!("{value:.0}")
            } else {
                let text = format!("{value:.2}");
                text.trim_end_matches('0').trim_end_matches('.').to_owned()
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(slots)
            .y_label_formatter(&label)
            .x_label_formatter(&value_label)
            .x_desc(self.y_label)
            .label_style(("sans-serif", 12))
            .draw()?;
        for (index, (name, values)) in self.series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(values.iter().enumerate().map(|(category, value)| {
                    let slot = row(category, index);
                    Rectangle::new(
                        [
                            (0.0, SegmentValue::Exact(slot)),
                            (*value, SegmentValue::Exact(slot + 1)),
                        ],
                        color.filled(),
                    )
                }))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        if self.series.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()?;
        }
        root.present()?;
        Ok(())
    }
}
