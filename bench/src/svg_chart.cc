// Drawing: axes with "nice" ticks, polylines, bars and a viridis colour scale.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace sp::bench {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kReferencePalette[] = {"#7f7f7f", "#bcbd22", "#17becf", "#8c564b",
                                             "#e377c2", "#aec7e8", "#ffbb78", "#98df8a",
                                             "#c5b0d5", "#c49c94", "#dbdb8d", "#9edae5"};

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// A published bar: lighter, with a dashed outline (the subtitle's "dashed" holds for bars too).
constexpr const char* kReferenceBar =
    " fill-opacity=\"0.55\" stroke=\"#333\" stroke-width=\"1\" stroke-dasharray=\"4 2\"";

std::string colorOf(const std::vector<ChartSeries>& series, size_t i) {
  size_t ours = 0;
  size_t refs = 0;
  for (size_t k = 0; k < i; ++k) {
    (series[k].reference ? refs : ours)++;
  }
  return series[i].reference ? kReferencePalette[refs % std::size(kReferencePalette)]
                             : kPalette[ours % std::size(kPalette)];
}

// A tick step of 1, 2 or 5 x 10^k that gives about `target` ticks up to `max`.
double niceStep(double max, int target) {
  if (max <= 0) {
    return 1;
  }
  const double raw = max / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * mag;
}

// The range drawn for value i of a series: present, finite and wider than a point.
std::optional<ValueRange> drawnRange(const ChartSeries& s, size_t i) {
  if (i >= s.ranges.size() || !s.ranges[i] || i >= s.values.size() || !s.values[i]) {
    return std::nullopt;
  }
  const ValueRange r = *s.ranges[i];
  if (!std::isfinite(r.min) || !std::isfinite(r.max) || !(r.min < r.max)) {
    return std::nullopt;
  }
  return r;
}

bool anyRange(const std::vector<ChartSeries>& series) {
  for (const auto& s : series) {
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (drawnRange(s, i)) {
        return true;
      }
    }
  }
  return false;
}

double seriesMax(const ChartData& d) {
  double m = 0;
  for (const auto& s : d.series) {
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (s.values[i] && std::isfinite(*s.values[i])) {
        m = std::max(m, *s.values[i]);
      }
      if (const auto r = drawnRange(s, i)) {
        m = std::max(m, r->max);
      }
    }
  }
  return m;
}

// Characters (UTF-8 code points), for estimating text widths.
size_t codePoints(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) {
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

// The first `n` code points of `text`.
std::string firstCodePoints(const std::string& text, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == n) {
        return text.substr(0, i);
      }
      ++seen;
    }
  }
  return text;
}

// Whether a published series with at least one value is drawn (one with none draws nothing).
bool anyReference(const std::vector<ChartSeries>& series) {
  return std::any_of(series.begin(), series.end(), [](const ChartSeries& s) {
    return s.reference && std::any_of(s.values.begin(), s.values.end(),
                                      [](const auto& v) { return v && std::isfinite(*v); });
  });
}

// The subtitle as drawn: the caller's, plus what the whiskers and the dashed series are when
// there are any.
std::string drawnSubtitle(const ChartData& d) {
  std::string text = d.subtitle;
  if (anyRange(d.series)) {
    text += std::string(text.empty() ? "" : "; ") + kRangeCaption;
  }
  if (!anyReference(d.series)) {
    return text;
  }
  text += text.empty() ? "" : "; ";
  text += "dashed: ";
  text += kPublishedCaption;
  if (!d.published_source.empty()) {
    text += " (" + d.published_source + ")";
  }
  return text;
}

// A vertical whisker from min to max with caps, titled with the range.
std::string whisker(double x, double y_min, double y_max, const std::string& color,
                    const std::string& title) {
  std::string out = "<g class=\"range\" stroke=\"" + color + "\" stroke-width=\"1.5\"><title>" +
                    xmlEscape(title) + "</title>";
  out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(y_min) + "\" x2=\"" + fmt(x) + "\" y2=\"" +
         fmt(y_max) + "\"/>";
  for (double y : {y_min, y_max}) {
    out += "<line x1=\"" + fmt(x - 4) + "\" y1=\"" + fmt(y) + "\" x2=\"" + fmt(x + 4) + "\" y2=\"" +
           fmt(y) + "\"/>";
  }
  return out + "</g>\n";
}

std::string rangeText(const ValueRange& r) {
  return "min\u2013max " + shortNumber(r.min) + "\u2013" + shortNumber(r.max);
}

struct Frame {
  double width = 900;
  double height = 500;
  double left = 84;
  double right = 250;
  double top = 64;
  double bottom = 80;
  double plotW() const { return width - left - right; }
  double plotH() const { return height - top - bottom; }
};

size_t subtitleWidth(const Frame& f) {
  return static_cast<size_t>(std::max(20.0, (f.width - f.left - 16) / 6.4));
}

// The subtitle's lines: each '\n'-separated part wrapped at spaces to `width` characters.
std::vector<std::string> subtitleLines(const std::string& subtitle, size_t width) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= subtitle.size()) {
    size_t nl = subtitle.find('\n', start);
    if (nl == std::string::npos) {
      nl = subtitle.size();
    }
    for (auto& line : wrapLabel(subtitle.substr(start, nl - start), width)) {
      out.push_back(std::move(line));
    }
    start = nl + 1;
  }
  return out;
}

std::string header(const Frame& f, const std::string& title, const std::string& subtitle) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + fmt(f.width) +
         "\" height=\"" + fmt(f.height) + "\" viewBox=\"0 0 " + fmt(f.width) + " " + fmt(f.height) +
         "\" font-family=\"" + kFontFamily + "\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + fmt(f.width) + "\" height=\"" + fmt(f.height) +
         "\" fill=\"#ffffff\"/>\n";
  out += "<text x=\"" + fmt(f.left) + "\" y=\"26\" font-size=\"17\" font-weight=\"bold\" " +
         "fill=\"#222\">" + xmlEscape(title) + "</text>\n";
  // About 6.4 px per character at 12 px; a subtitle wider than the chart wraps at spaces.
  const auto lines =
      subtitle.empty() ? std::vector<std::string>{} : subtitleLines(subtitle, subtitleWidth(f));
  for (size_t l = 0; l < lines.size(); ++l) {
    out += "<text x=\"" + fmt(f.left) + "\" y=\"" + fmt(46 + 15 * static_cast<double>(l)) +
           "\" font-size=\"12\" fill=\"#555\">" + xmlEscape(lines[l]) + "</text>\n";
  }
  return out;
}

// A line or bar chart's frame, made taller (plot unchanged) for each extra subtitle line.
Frame chartFrame(const std::string& subtitle) {
  Frame f;
  const size_t lines = subtitle.empty() ? 1 : subtitleLines(subtitle, subtitleWidth(f)).size();
  const double extra = 15 * static_cast<double>(std::max<size_t>(lines, 1) - 1);
  f.top += extra;
  f.height += extra;
  return f;
}

// Y axis with grid lines from 0 to the rounded-up maximum; returns that maximum.
double yAxis(std::string& out, const Frame& f, double max, const std::string& title) {
  const double step = niceStep(max > 0 ? max : 1, 5);
  const double top = std::max(step, std::ceil((max > 0 ? max : 1) * 1.05 / step) * step);
  for (double v = 0; v <= top + step / 2; v += step) {
    const double y = f.top + f.plotH() * (1 - v / top);
    out += "<line x1=\"" + fmt(f.left) + "\" y1=\"" + fmt(y) + "\" x2=\"" +
           fmt(f.left + f.plotW()) + "\" y2=\"" + fmt(y) +
           "\" stroke=\"#e5e5e5\" stroke-width=\"1\"/>\n";
    out += "<text x=\"" + fmt(f.left - 8) + "\" y=\"" + fmt(y + 4) +
           "\" font-size=\"11\" text-anchor=\"end\" fill=\"#444\">" + shortNumber(v) + "</text>\n";
  }
  out += "<line x1=\"" + fmt(f.left) + "\" y1=\"" + fmt(f.top) + "\" x2=\"" + fmt(f.left) +
         "\" y2=\"" + fmt(f.top + f.plotH()) + "\" stroke=\"#888\"/>\n";
  out += "<line x1=\"" + fmt(f.left) + "\" y1=\"" + fmt(f.top + f.plotH()) + "\" x2=\"" +
         fmt(f.left + f.plotW()) + "\" y2=\"" + fmt(f.top + f.plotH()) + "\" stroke=\"#888\"/>\n";
  const double cy = f.top + f.plotH() / 2;
  out += "<text x=\"18\" y=\"" + fmt(cy) + "\" font-size=\"12\" fill=\"#333\" " +
         "text-anchor=\"middle\" transform=\"rotate(-90 18 " + fmt(cy) + ")\">" + xmlEscape(title) +
         "</text>\n";
  return top;
}

void xLabels(std::string& out, const Frame& f, const std::vector<std::string>& labels,
             const std::vector<double>& xs, const std::string& title) {
  for (size_t i = 0; i < labels.size(); ++i) {
    // About 6.5 px per character at 11 px.
    const double slot = f.plotW() / static_cast<double>(std::max<size_t>(1, labels.size()));
    const auto lines = wrapLabel(labels[i], std::max<size_t>(6, static_cast<size_t>(slot / 6.5)));
    for (size_t l = 0; l < lines.size(); ++l) {
      out += "<text x=\"" + fmt(xs[i]) + "\" y=\"" + fmt(f.top + f.plotH() + 18 + 13 * l) +
             "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444\">" + xmlEscape(lines[l]) +
             "</text>\n";
    }
  }
  out += "<text x=\"" + fmt(f.left + f.plotW() / 2) + "\" y=\"" + fmt(f.height - 12) +
         "\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">" + xmlEscape(title) +
         "</text>\n";
}

void legend(std::string& out, const Frame& f, const std::vector<ChartSeries>& series, bool bars) {
  const double x = f.left + f.plotW() + 18;
  double y = f.top + 4;
  bool captioned = false;
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = colorOf(series, i);
    if (series[i].reference && !captioned && anyReference(series)) {
      // One caption above the published series (dashed), so none reads as measured here.
      captioned = true;
      // 38 characters at 10 px: about 225 px, inside the legend's column.
      out += "<text x=\"" + fmt(x) + "\" y=\"" + fmt(y) +
             "\" font-size=\"10\" font-style=\"italic\" fill=\"#555\">" + kPublishedCaption +
             "</text>\n";
      y += 21;
    }
    if (bars) {
      out += "<rect x=\"" + fmt(x) + "\" y=\"" + fmt(y - 9) + "\" width=\"14\" height=\"10\" " +
             "fill=\"" + color + "\"" + (series[i].reference ? kReferenceBar : "") + "/>\n";
    } else {
      out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(y - 4) + "\" x2=\"" + fmt(x + 22) +
             "\" y2=\"" + fmt(y - 4) + "\" stroke=\"" + color + "\" stroke-width=\"" +
             (series[i].reference ? "1.5\" stroke-dasharray=\"5 3" : "2.5") + "\"/>\n";
    }
    const auto lines = wrapLabel(series[i].name, 30);
    for (size_t l = 0; l < lines.size(); ++l) {
      out += "<text x=\"" + fmt(x + 28) + "\" y=\"" + fmt(y + 13 * l) +
             "\" font-size=\"11\" fill=\"#333\">" + xmlEscape(lines[l]) + "</text>\n";
    }
    y += 8 + 13 * static_cast<double>(lines.size());
  }
}

// Viridis, sampled at five stops and interpolated.
std::string viridis(double t) {
  static const double stops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double u = t - i;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x",
                static_cast<int>(stops[i][0] + (stops[i + 1][0] - stops[i][0]) * u),
                static_cast<int>(stops[i][1] + (stops[i + 1][1] - stops[i][1]) * u),
                static_cast<int>(stops[i][2] + (stops[i + 1][2] - stops[i][2]) * u));
  return buf;
}

}  // namespace

std::string xmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string shortNumber(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3gM", v / 1e6);
  } else if (a >= 1e4) {
    std::snprintf(buf, sizeof(buf), "%.3gk", v / 1e3);
  } else if (a >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  }
  return buf;
}

std::vector<std::string> wrapLabel(const std::string& text, size_t width) {
  width = std::max<size_t>(width, 2);
  std::vector<std::string> lines;
  std::string line;
  size_t line_width = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t space = text.find(' ', pos);
    if (space == std::string::npos) {
      space = text.size();
    }
    std::string word = text.substr(pos, space - pos);
    pos = space + 1;
    if (word.empty()) {
      continue;
    }
    size_t word_width = codePoints(word);
    if (word_width > width) {
      // Shortened, not split: the rest of the word would read as a word of its own.
      word = firstCodePoints(word, width - 1) + "\u2026";
      word_width = width;
    }
    if (!line.empty() && line_width + 1 + word_width > width) {
      lines.push_back(line);
      line.clear();
      line_width = 0;
    }
    if (!line.empty()) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += word_width;
  }
  if (!line.empty()) {
    lines.push_back(line);
  }
  return lines;
}

std::string lineChartSvg(const ChartData& d) {
  const std::string subtitle = drawnSubtitle(d);
  const Frame f = chartFrame(subtitle);
  std::string out = header(f, d.title, subtitle);
  const double top = yAxis(out, f, seriesMax(d), d.y_title);
  const size_t n = d.x_labels.size();
  std::vector<double> xs;
  for (size_t i = 0; i < n; ++i) {
    xs.push_back(n == 1 ? f.left + f.plotW() / 2
                        : f.left + 24 + (f.plotW() - 48) * static_cast<double>(i) / (n - 1));
  }
  xLabels(out, f, d.x_labels, xs, d.x_title);
  // References first, so our lines are drawn on top.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t s = 0; s < d.series.size(); ++s) {
      const ChartSeries& series = d.series[s];
      if (series.reference != (pass == 0)) {
        continue;
      }
      const std::string color = colorOf(d.series, s);
      const std::string stroke = series.reference ? "stroke-width=\"1.5\" stroke-dasharray=\"5 3\" "
                                                    "stroke-opacity=\"0.8\""
                                                  : "stroke-width=\"2.5\"";
      std::string points;
      auto flush = [&] {
        if (points.find(' ') != std::string::npos) {
          out += "<polyline fill=\"none\" stroke=\"" + color + "\" " + stroke + " points=\"" +
                 points + "\"/>\n";
        }
        points.clear();
      };
      for (size_t i = 0; i < n && i < series.values.size(); ++i) {
        if (!series.values[i] || !std::isfinite(*series.values[i])) {
          flush();
          continue;
        }
        const double y = f.top + f.plotH() * (1 - *series.values[i] / top);
        if (!points.empty()) {
          points += ' ';
        }
        points += fmt(xs[i]) + "," + fmt(y);
        out +=
            "<circle cx=\"" + fmt(xs[i]) + "\" cy=\"" + fmt(y) + "\" r=\"" +
            (series.reference ? "2" : "3.5") + "\" fill=\"" + color + "\"><title>" +
            xmlEscape(series.name + " @ " + d.x_labels[i] + ": " + shortNumber(*series.values[i])) +
            "</title></circle>\n";
        if (const auto r = drawnRange(series, i)) {
          // Side by side, so the whiskers of series that meet at one x stay apart.
          const double dx = (static_cast<double>(s) - (d.series.size() - 1) / 2.0) * 5;
          out += whisker(xs[i] + dx, f.top + f.plotH() * (1 - r->min / top),
                         f.top + f.plotH() * (1 - r->max / top), color,
                         series.name + " @ " + d.x_labels[i] + ": " + rangeText(*r));
        }
      }
      flush();
    }
  }
  legend(out, f, d.series, false);
  out += "</svg>\n";
  return out;
}

std::string barChartSvg(const ChartData& d) {
  const std::string subtitle = drawnSubtitle(d);
  const Frame f = chartFrame(subtitle);
  std::string out = header(f, d.title, subtitle);
  const double top = yAxis(out, f, seriesMax(d), d.y_title);
  const size_t n = d.x_labels.size();
  const size_t k = std::max<size_t>(1, d.series.size());
  const double group = f.plotW() / std::max<size_t>(1, n);
  const double bar = std::min(40.0, group * 0.8 / k);
  std::vector<double> xs;
  for (size_t i = 0; i < n; ++i) {
    xs.push_back(f.left + group * (i + 0.5));
  }
  xLabels(out, f, d.x_labels, xs, d.x_title);
  const bool labels = n * k <= 24;
  for (size_t s = 0; s < d.series.size(); ++s) {
    const ChartSeries& series = d.series[s];
    const std::string color = colorOf(d.series, s);
    for (size_t i = 0; i < n && i < series.values.size(); ++i) {
      if (!series.values[i] || !std::isfinite(*series.values[i])) {
        continue;
      }
      const double v = *series.values[i];
      const double h = f.plotH() * v / top;
      const double x = xs[i] - bar * k / 2 + bar * s;
      const double y = f.top + f.plotH() - h;
      out += "<rect x=\"" + fmt(x + 1) + "\" y=\"" + fmt(y) + "\" width=\"" + fmt(bar - 2) +
             "\" height=\"" + fmt(h) + "\" fill=\"" + color + "\"" +
             (series.reference ? kReferenceBar : "") + "><title>" +
             xmlEscape(series.name + " / " + d.x_labels[i] + ": " + shortNumber(v)) +
             "</title></rect>\n";
      const auto r = drawnRange(series, i);
      if (r) {
        out += whisker(x + bar / 2, f.top + f.plotH() * (1 - r->min / top),
                       f.top + f.plotH() * (1 - r->max / top), "#222222",
                       series.name + " / " + d.x_labels[i] + ": " + rangeText(*r));
      }
      if (labels) {
        // Above the whisker's top when there is one.
        const double label_y = r ? std::min(y, f.top + f.plotH() * (1 - r->max / top)) : y;
        out += "<text x=\"" + fmt(x + bar / 2) + "\" y=\"" + fmt(label_y - 3) +
               "\" font-size=\"9\" text-anchor=\"middle\" fill=\"#333\">" + shortNumber(v) +
               "</text>\n";
      }
    }
  }
  legend(out, f, d.series, true);
  out += "</svg>\n";
  return out;
}

std::string heatMapSvg(const HeatMapData& d) {
  const double cell_w = 110;
  const double cell_h = 56;
  const double left = 120;
  const double width = left + cell_w * d.cols.size() + 140;
  Frame f;
  const double title_w = left + 10.5 * static_cast<double>(codePoints(d.title)) + 20;  // bold 17 px
  // The frame is as wide as the longest subtitle line; each line after the first ('\n' in the
  // subtitle) moves the grid down.
  double subtitle_w = 0;
  const std::vector<std::string> parts = subtitleLines(d.subtitle, SIZE_MAX);
  for (const auto& line : parts) {
    subtitle_w = std::max(subtitle_w, left + 6.4 * static_cast<double>(codePoints(line)) + 20);
  }
  f.width = std::max({width, 520.0, title_w, subtitle_w});
  f.left = left;
  const double top = 100 + 15 * static_cast<double>(std::max<size_t>(parts.size(), 1) - 1);
  const double height = top + cell_h * d.rows.size() + 70;
  f.height = height;
  std::string out = header(f, d.title, d.subtitle);
  double lo = INFINITY;
  double hi = -INFINITY;
  for (const auto& row : d.values) {
    for (const auto& v : row) {
      if (v && std::isfinite(*v)) {
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
      }
    }
  }
  // The colour scale starts at 0 (not at the smallest cell), so colours compare magnitudes.
  lo = std::min(lo, 0.0);
  if (!(lo <= hi) || hi <= lo) {
    lo = 0;
    hi = std::max(hi, 1.0);
  }
  out += "<text x=\"" + fmt(left + cell_w * d.cols.size() / 2) + "\" y=\"" + fmt(top - 30) +
         "\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">" + xmlEscape(d.col_title) +
         "</text>\n";
  for (size_t c = 0; c < d.cols.size(); ++c) {
    out += "<text x=\"" + fmt(left + cell_w * (c + 0.5)) + "\" y=\"" + fmt(top - 8) +
           "\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">" + xmlEscape(d.cols[c]) +
           "</text>\n";
  }
  out += "<text x=\"16\" y=\"" + fmt(top - 8) + "\" font-size=\"12\" fill=\"#333\">" +
         xmlEscape(d.row_title) + "</text>\n";
  for (size_t r = 0; r < d.rows.size(); ++r) {
    const double y = top + cell_h * r;
    out += "<text x=\"" + fmt(left - 10) + "\" y=\"" + fmt(y + cell_h / 2 + 4) +
           "\" font-size=\"12\" text-anchor=\"end\" fill=\"#333\">" + xmlEscape(d.rows[r]) +
           "</text>\n";
    for (size_t c = 0; c < d.cols.size(); ++c) {
      const double x = left + cell_w * c;
      std::optional<double> v;
      if (r < d.values.size() && c < d.values[r].size()) {
        v = d.values[r][c];
      }
      std::string note;
      if (r < d.notes.size() && c < d.notes[r].size()) {
        note = d.notes[r][c];
      }
      std::optional<ValueRange> range;
      if (r < d.ranges.size() && c < d.ranges[r].size() && d.ranges[r][c] &&
          d.ranges[r][c]->min < d.ranges[r][c]->max) {
        range = d.ranges[r][c];
      }
      const bool has = v && std::isfinite(*v);
      const double t = has ? (hi > lo ? (*v - lo) / (hi - lo) : 1.0) : 0;
      const std::string fill = has ? viridis(t) : "#d9d9d9";
      out += "<rect x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" width=\"" + fmt(cell_w) +
             "\" height=\"" + fmt(cell_h) + "\" fill=\"" + fill +
             "\" stroke=\"#ffffff\" stroke-width=\"2\"/>\n";
      const std::string ink = has && t < 0.6 ? "#ffffff" : "#222222";
      const std::string text = has ? shortNumber(*v) : (note.empty() ? "—" : note);
      // The value, then (smaller) its range and the note; moved up to make room for the range.
      const bool ranged = has && range.has_value();
      double line_y = y + cell_h / 2 + (ranged ? -5 : 1);
      out += "<text x=\"" + fmt(x + cell_w / 2) + "\" y=\"" + fmt(line_y) +
             "\" font-size=\"14\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"" + ink +
             "\">" + xmlEscape(text) + "</text>\n";
      if (ranged) {
        line_y += 14;
        out += "<text class=\"range\" x=\"" + fmt(x + cell_w / 2) + "\" y=\"" + fmt(line_y) +
               "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" + ink + "\">" +
               xmlEscape(shortNumber(range->min) + "\u2013" + shortNumber(range->max)) +
               "</text>\n";
      }
      if (has && !note.empty()) {
        line_y += ranged ? 12 : 16;
        out += "<text x=\"" + fmt(x + cell_w / 2) + "\" y=\"" + fmt(line_y) +
               "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" + ink + "\">" +
               xmlEscape(note) + "</text>\n";
      }
    }
  }
  // Colour legend.
  const double lx = left + cell_w * d.cols.size() + 30;
  const double lh = std::max(cell_h * d.rows.size(), 80.0);
  for (int i = 0; i < 20; ++i) {
    out += "<rect x=\"" + fmt(lx) + "\" y=\"" + fmt(top + lh * (19 - i) / 20.0) +
           "\" width=\"16\" height=\"" + fmt(lh / 20.0 + 0.5) + "\" fill=\"" + viridis(i / 19.0) +
           "\"/>\n";
  }
  out += "<text x=\"" + fmt(lx + 22) + "\" y=\"" + fmt(top + 10) + "\" font-size=\"11\">" +
         shortNumber(hi) + "</text>\n";
  out += "<text x=\"" + fmt(lx + 22) + "\" y=\"" + fmt(top + lh) + "\" font-size=\"11\">" +
         shortNumber(lo) + "</text>\n";
  out += "<text x=\"" + fmt(lx) + "\" y=\"" + fmt(top + lh + 20) + "\" font-size=\"11\">" +
         xmlEscape(d.legend.empty() ? "scale from 0" : d.legend + ", scale from 0") + "</text>\n";
  const bool any_range = std::any_of(d.ranges.begin(), d.ranges.end(), [](const auto& row) {
    return std::any_of(row.begin(), row.end(), [](const auto& r) { return r && r->min < r->max; });
  });
  if (any_range) {
    out +=
        "<text x=\"" + fmt(left) + "\" y=\"" + fmt(top + cell_h * d.rows.size() + 22) +
        "\" font-size=\"11\" fill=\"#555\">under a value: min\u2013max of the repetitions</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace sp::bench
