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
        // Each category takes one slot per series and one empty slot between groups.
        let stride = per_category + 1;
        let slots = categories.len() * stride;
        let highest = self
            .series
            .iter()
            .flat_map(|(_, values)| values.iter().copied())
            .fold(0.0_f64, f64::max);
        // Headroom above the highest bar; more with a legend, which sits in the upper left.
        let headroom = if self.series.len() > 1 { 1.4 } else { 1.15 };
        let top = if highest > 0.0 {
            highest * headroom
        } else {
            1.0
        };

        let root = SVGBackend::with_string(svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d((0..slots as i32).into_segmented(), 0.0..top)?;
        let label = |value: &SegmentValue<i32>| match value {
            SegmentValue::CenterOf(slot) | SegmentValue::Exact(slot) => {
                let slot = usize::try_from(*slot).unwrap_or(usize::MAX);
                if slot % stride == (per_category - 1) / 2 {
                    categories.get(slot / stride).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
            SegmentValue::Last => String::new(),
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(slots)
            .x_label_formatter(&label)
            .y_desc(self.y_label)
            .label_style(("sans-serif", 12))
            .draw()?;
        for (index, (name, values)) in self.series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(values.iter().enumerate().map(|(category, value)| {
                    let slot = (category * stride + index) as i32;
                    Rectangle::new(
                        [
                            (SegmentValue::Exact(slot), 0.0),
                            (SegmentValue::Exact(slot + 1), *value),
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
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()?;
        }
        root.present()?;
        Ok(())
    }
}
