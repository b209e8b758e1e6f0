#include "job_table_checks.h"

#include <algorithm>
#include <sstream>

namespace zyfa::test {
namespace {

// Collects violations, keeping only the first few messages so that a broken table of a
// million jobs does not print a million lines.
class Violations {
 public:
  explicit Violations(JobTableReport* report) : report_(report) {}
  template <typename... Parts>
  void add(const Parts&... parts) {
    ++count_;
    if (report_->violations.size() >= kKept) return;
    std::ostringstream os;
    (os << ... << parts);
    report_->violations.push_back(os.str());
  }
  uint64_t count() const { return count_; }

 private:
  static constexpr size_t kKept = 12;
  JobTableReport* report_;
  uint64_t count_ = 0;
};

// Returns the values of seq with consecutive repeats merged, then reports whether a value
// occurs in two separate runs.
bool runs_are_contiguous(std::vector<uint64_t> seq) {
  seq.erase(std::unique(seq.begin(), seq.end()), seq.end());
  std::sort(seq.begin(), seq.end());
  return std::adjacent_find(seq.begin(), seq.end()) == seq.end();
}

}  // namespace

std::string JobTableReport::summary() const {
  std::ostringstream os;
  if (ok()) {
    os << jobs << " jobs, work per workgroup " << min_wg_work << ".." << max_wg_work
       << " key tiles, " << half_jobs << " half job(s)";
  } else {
    for (const std::string& v : violations) os << v << "\n";
  }
  return os.str();
}

std::string job_table_name(const JobTableParams& p) {
  std::ostringstream os;
  os << "S" << p.seqlen << "_T" << p.tile_rows << "_B" << p.batch << "_H" << p.heads << "_Gqa"
     << (p.heads_k > 0 ? p.heads / p.heads_k : 0) << "_G" << p.grid << "_X" << p.num_xcds;
  return os.str();
}

JobTableReport check_job_table(const JobTableParams& p, const JobTable& table) {
  JobTableReport report;
  Violations bad(&report);

  const uint64_t n = static_cast<uint64_t>((p.seqlen + p.tile_rows - 1) / p.tile_rows);
  const uint64_t streams = static_cast<uint64_t>(p.batch * p.heads);
  const uint64_t total_tiles = streams * n;
  // Two tiles per job, except one half job when the tile count is odd.
  const uint64_t jobs = (total_tiles + 1) / 2;
  const uint64_t grid = static_cast<uint64_t>(p.grid);
  const uint64_t xcds = static_cast<uint64_t>(p.num_xcds);
  const uint64_t group = static_cast<uint64_t>(p.heads / p.heads_k);
  report.jobs = jobs;

  const uint64_t expected_words = 3 + grid + 2 * jobs;
  if (table.words.size() != expected_words) {
    bad.add("table has ", table.words.size(), " words, expected 3 + G + 2 * jobs = ",
            expected_words);
    return report;  // nothing below can be read safely
  }
  if (job_table_word_count(p) != expected_words) {
    bad.add("job_table_word_count gives ", job_table_word_count(p), ", table has ",
            expected_words);
  }
  if (table.grid() != grid) bad.add("words[0] = ", table.grid(), ", expected G = ", grid);
  if (table.n_tiles() != n) bad.add("words[1] = ", table.n_tiles(), ", expected n = ", n);
  if (table.begin(0) != 0) bad.add("offsets[0] = ", table.begin(0));
  if (table.num_jobs() != jobs) bad.add("offsets[G] = ", table.num_jobs(), ", expected ", jobs);
  for (uint64_t w = 0; w < grid; ++w) {
    if (table.end(w) < table.begin(w) || table.end(w) > jobs) {
      bad.add("workgroup ", w, " has offsets ", table.begin(w), "..", table.end(w));
      return report;
    }
  }

  // Every job: valid ids, first-with-last within a stream or two middles of two streams, and
  // n + 1 key tiles of work (half of it for the single allowed half job).
  const auto stream_of = [n](uint32_t tile) { return tile / n; };
  const auto work_of = [n](uint32_t tile) { return tile % n + 1; };  // causal key tiles
  std::vector<uint8_t> seen(total_tiles, 0);
  for (uint64_t j = 0; j < jobs; ++j) {
    const uint32_t a = table.tile_a(static_cast<uint32_t>(j));
    const uint32_t b = table.tile_b(static_cast<uint32_t>(j));
    if (a == kNoTile || a >= total_tiles || (b != kNoTile && b >= total_tiles)) {
      bad.add("job ", j, " has tiles (", a, ", ", b, ") outside [0, ", total_tiles, ")");
      continue;
    }
    ++seen[a];
    if (b == kNoTile) {
      ++report.half_jobs;
      if (n % 2 == 0 || a % n != n / 2) bad.add("half job ", j, " holds tile ", a % n, " of ", n);
      continue;
    }
    ++seen[b];
    if (stream_of(a) == stream_of(b)) {
      if (a % n + b % n != n - 1) {
        bad.add("job ", j, " pairs tiles ", a % n, " and ", b % n, " of one stream, n = ", n);
      }
    } else if (n % 2 == 0 || a % n != n / 2 || b % n != n / 2) {
      bad.add("job ", j, " mixes streams with tiles ", a % n, " and ", b % n, ", n = ", n);
    }
    if (work_of(a) + work_of(b) != n + 1) {
      bad.add("job ", j, " has work ", work_of(a) + work_of(b), ", expected ", n + 1);
    }
  }
  for (uint64_t t = 0; t < total_tiles; ++t) {
    if (seen[t] != 1) bad.add("tile ", t, " appears ", int(seen[t]), " times");
  }
  const uint64_t expected_half = (n % 2 == 1 && streams % 2 == 1) ? 1 : 0;
  if (report.half_jobs != expected_half) {
    bad.add(report.half_jobs, " half jobs, expected ", expected_half);
  }

  // Balance: floor or ceil of jobs / G per workgroup, so work differs by at most one job.
  report.min_wg_work = UINT64_MAX;
  for (uint64_t w = 0; w < grid; ++w) {
    const uint64_t count = table.end(w) - table.begin(w);
    if (count != jobs / grid && count != (jobs + grid - 1) / grid) {
      bad.add("workgroup ", w, " has ", count, " jobs; ", jobs, " jobs over ", grid);
    }
    uint64_t work = 0;
    for (uint32_t j = table.begin(w); j < table.end(w); ++j) {
      work += work_of(table.tile_a(j));
      if (table.tile_b(j) != kNoTile) work += work_of(table.tile_b(j));
    }
    report.min_wg_work = std::min(report.min_wg_work, work);
    report.max_wg_work = std::max(report.max_wg_work, work);
  }
  if (report.max_wg_work - report.min_wg_work > n + 1) {
    bad.add("work per workgroup spans ", report.min_wg_work, "..", report.max_wg_work,
            ", more than one job (", n + 1, ")");
  }
  if (bad.count() > 0) return report;  // the locality checks assume valid tiles

  // Locality inside a workgroup: each stream and each KV group forms one contiguous run.
  const auto kv_group_of = [&](uint32_t tile) {
    const uint64_t s = stream_of(tile);
    return (s / p.heads) * p.heads_k + (s % p.heads) / group;
  };
  for (uint64_t w = 0; w < grid; ++w) {
    std::vector<uint64_t> stream_seq, kv_seq;
    for (uint32_t j = table.begin(w); j < table.end(w); ++j) {
      for (uint32_t tile : {table.tile_a(j), table.tile_b(j)}) {
        if (tile == kNoTile) continue;
        stream_seq.push_back(stream_of(tile));
        kv_seq.push_back(kv_group_of(tile));
      }
    }
    if (!runs_are_contiguous(stream_seq)) bad.add("workgroup ", w, " returns to a stream");
    if (!runs_are_contiguous(kv_seq)) bad.add("workgroup ", w, " returns to a KV group");
  }

  // Locality per chiplet (workgroups w with w % xcds == x): its streams form an interval,
  // the intervals follow each other (sharing at most a boundary stream), and the jobs that its
  // workgroups run at the same step touch only a few neighbouring streams.
  const uint64_t pairs = n / 2;
  int64_t previous_hi = -1;
  for (uint64_t x = 0; x < std::min(xcds, grid); ++x) {
    std::vector<uint64_t> touched;
    uint64_t longest = 0;
    for (uint64_t w = x; w < grid; w += xcds) {
      longest = std::max<uint64_t>(longest, table.end(w) - table.begin(w));
    }
    uint64_t wgs = (grid - x + xcds - 1) / xcds;
    for (uint64_t step = 0; step < longest; ++step) {
      uint64_t lo = UINT64_MAX, hi = 0;
      for (uint64_t w = x; w < grid; w += xcds) {
        if (table.begin(w) + step >= table.end(w)) continue;
        const uint32_t j = table.begin(w) + static_cast<uint32_t>(step);
        for (uint32_t tile : {table.tile_a(j), table.tile_b(j)}) {
          if (tile == kNoTile) continue;
          lo = std::min(lo, stream_of(tile));
          hi = std::max(hi, stream_of(tile));
          touched.push_back(stream_of(tile));
        }
      }
      // wgs consecutive jobs of a stream-major order cover at most ceil(wgs / pairs) + 1
      // streams, and a job of two middle tiles reaches one stream further.
      const uint64_t bound = pairs > 0 ? (wgs + pairs - 1) / pairs + 2 : 2 * wgs;
      if (hi - lo + 1 > bound) {
        bad.add("chiplet ", x, " step ", step, " spans streams ", lo, "..", hi,
                ", more than ", bound);
      }
    }
    if (touched.empty()) continue;
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const uint64_t lo = touched.front(), hi = touched.back();
    if (hi - lo + 1 != touched.size()) {
      bad.add("chiplet ", x, " streams ", lo, "..", hi, " have gaps");
    }
    if (static_cast<int64_t>(lo) < previous_hi) {
      bad.add("chiplet ", x, " starts at stream ", lo, " before the previous chiplet ends (",
              previous_hi, ")");
    }
    previous_hi = static_cast<int64_t>(hi);
  }
  return report;
}

}  // namespace zyfa::test

namespace zyfa {
void PrintTo(const JobTableParams& params, std::ostream* os) {
  *os << test::job_table_name(params);
}
}  // namespace zyfa
