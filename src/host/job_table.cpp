// Job-table builder. The layout and the reasoning behind the order are in job_table.h and
// docs/design.md ("Job tables"); this file only has to produce that order quickly, since it
// runs on the host for every new shape.
#include "host/job_table.h"

#include "host/job_table_balanced.h"

#include <algorithm>
#include <limits>

namespace zyfa {
namespace {

// Sizes derived from the parameters, all known to fit their types once make_plan succeeds.
struct Plan {
  uint64_t batch_heads = 0;   // (batch, head) streams of query tiles
  uint64_t n_tiles = 0;       // query tiles per stream
  uint64_t pairs = 0;         // full first-with-last pairs per stream: n_tiles / 2
  bool odd = false;           // n_tiles odd: every stream has a middle tile
  uint64_t jobs = 0;          // total jobs, the half job included
  uint64_t grid = 0;          // persistent workgroups
  uint64_t xcds = 0;          // chiplets; workgroup w runs on chiplet w % xcds
  uint64_t words = 0;         // table size in uint32 words
};

bool mul_fits(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

bool make_plan(const JobTableParams& p, Plan* plan) {
  if (p.batch < 1 || p.heads < 1 || p.heads_k < 1 || p.seqlen < 1 || p.tile_rows < 1 ||
      p.grid < 1 || p.num_xcds < 1 || p.heads % p.heads_k != 0) {
    return false;
  }
  Plan s;
  s.n_tiles = (static_cast<uint64_t>(p.seqlen) - 1) / static_cast<uint64_t>(p.tile_rows) + 1;
  uint64_t total_tiles = 0;
  if (!mul_fits(static_cast<uint64_t>(p.batch), static_cast<uint64_t>(p.heads), &s.batch_heads) ||
      !mul_fits(s.batch_heads, s.n_tiles, &total_tiles)) {
    return false;
  }
  // Every linear id is below total_tiles and must differ from kNoTile.
  if (total_tiles > kNoTile) return false;
  s.pairs = s.n_tiles / 2;
  s.odd = (s.n_tiles % 2) != 0;
  // Two middle tiles of different streams make one job; an odd number of streams leaves one
  // half job.
  s.jobs = s.batch_heads * s.pairs + (s.odd ? (s.batch_heads + 1) / 2 : 0);
  s.grid = static_cast<uint64_t>(p.grid);
  s.xcds = static_cast<uint64_t>(p.num_xcds);
  // Largest word count whose byte size still fits 32 bits.
  constexpr uint64_t kMaxWords = std::numeric_limits<uint32_t>::max() / sizeof(uint32_t);
  // Each term below 2^30 first, so that the sum below cannot wrap.
  if (s.grid > kMaxWords || s.jobs > kMaxWords) return false;
  s.words = 3 + s.grid + 2 * s.jobs;
  if (s.words > kMaxWords) return false;
  *plan = s;
  return true;
}

// Produces the jobs in their global order, one at a time without divisions:
// stream by stream in linear (batch, head) order, each stream's pairs (i, n-1-i) by
// increasing i. With odd n, the middle tiles of two neighbouring streams s, s+1 make one job
// placed between the pairs of those two streams, so every stream's jobs stay one contiguous
// range. With an odd number of streams as well, stream 0's middle tile is left alone: that
// half job comes first of all, so it lands on workgroup 0, which holds the most jobs (see
// build_job_table) and thus keeps the work spread within one job. Couples are then (1, 2),
// (3, 4), ...
class GlobalOrder {
 public:
  explicit GlobalOrder(const Plan& plan)
      : plan_(plan),
        half_pending_(plan.odd && plan.batch_heads % 2 == 1),
        couple_parity_(half_pending_ ? 1 : 0) {}

  void next(uint32_t* tile_a, uint32_t* tile_b) {
    const uint64_t middle = plan_.n_tiles / 2;
    if (half_pending_) {
      *tile_a = static_cast<uint32_t>(middle);
      *tile_b = kNoTile;
      half_pending_ = false;
      return;
    }
    for (;;) {
      if (pair_ < plan_.pairs) {
        const uint64_t base = stream_ * plan_.n_tiles;
        *tile_a = static_cast<uint32_t>(base + pair_);
        *tile_b = static_cast<uint32_t>(base + plan_.n_tiles - 1 - pair_);
        ++pair_;
        return;
      }
      if (plan_.odd && !middle_done_ && stream_ % 2 == couple_parity_ &&
          stream_ + 1 < plan_.batch_heads) {
        *tile_a = static_cast<uint32_t>(stream_ * plan_.n_tiles + middle);
        *tile_b = static_cast<uint32_t>((stream_ + 1) * plan_.n_tiles + middle);
        middle_done_ = true;
        return;
      }
      ++stream_;
      pair_ = 0;
      middle_done_ = false;
    }
  }

 private:
  const Plan& plan_;
  bool half_pending_;
  uint64_t couple_parity_;
  uint64_t stream_ = 0;
  uint64_t pair_ = 0;
  bool middle_done_ = false;
};

}  // namespace

uint64_t job_table_word_count(const JobTableParams& params) {
  Plan plan;
  return make_plan(params, &plan) ? plan.words : 0;
}

bool build_job_table(const JobTableParams& params, JobTable* out) {
  if (params.schedule == JobSchedule::kBalancedWork) return build_balanced_job_table(params, out);
  out->words.clear();
  Plan plan;
  if (!make_plan(params, &plan)) return false;

  std::vector<uint32_t>& words = out->words;
  words.resize(plan.words);
  words[0] = static_cast<uint32_t>(plan.grid);
  words[1] = static_cast<uint32_t>(plan.n_tiles);

  // Balance: workgroup w gets floor(jobs / G) jobs, one more when w < jobs % G. The extra jobs
  // thus go to the lowest workgroups, which lie on every chiplet in turn, and workgroup 0
  // (which receives the half job, if any) always holds the most.
  const uint64_t per_wg = plan.jobs / plan.grid;
  const uint64_t extra = plan.jobs % plan.grid;
  uint32_t* offsets = words.data() + 2;
  for (uint64_t w = 0; w <= plan.grid; ++w) {
    offsets[w] = static_cast<uint32_t>(w * per_wg + std::min(w, extra));
  }
  uint32_t* jobs = words.data() + 3 + plan.grid;

  // Chiplet x takes the next contiguous run of the global order, as many jobs as its
  // workgroups hold, and deals it to them a step at a time: at step t its m workgroups run m
  // consecutive jobs (in snaking order, below), mostly pairs of one stream, which share K and
  // V in the chiplet's L2.
  // Each workgroup's jobs are a subsequence of the global order, so its streams form
  // contiguous runs too. The run is generated into a staging buffer first and then copied out
  // workgroup by workgroup: writing it straight into the lists would store to m places a
  // power-of-two stride apart (one chiplet's workgroups are xcds apart), which thrashes the
  // cache sets and made the build several times slower.
  const uint64_t used_xcds = std::min(plan.xcds, plan.grid);
  const uint64_t max_chunk = ((plan.grid + plan.xcds - 1) / plan.xcds) * (per_wg + 1);
  std::vector<uint64_t> staging(static_cast<size_t>(std::min(max_chunk, plan.jobs)));
  GlobalOrder order(plan);
  for (uint64_t x = 0; x < used_xcds; ++x) {
    const uint64_t wgs = (plan.grid - x + plan.xcds - 1) / plan.xcds;  // w = x + k * xcds
    const uint64_t wgs_extra = extra > x ? (extra - x + plan.xcds - 1) / plan.xcds : 0;
    const uint64_t chunk = wgs * per_wg + wgs_extra;
    for (uint64_t q = 0; q < chunk; ++q) {
      uint32_t a, b;
      order.next(&a, &b);
      staging[q] = uint64_t{a} | (uint64_t{b} << 32);
    }
    // At step t workgroup k of this chiplet takes run position t wgs + k, or t wgs + wgs - 1 - k
    // when t is odd (the deal snakes): the tiles at a position of the run depend on the
    // position (pair i of a stream sits at i mod pairs-per-stream), and so does a tile's fixed
    // cost, so a workgroup that took an early pair at one step takes a late one at the next. In
    // the last step, when it is partial, only the first wgs_extra workgroups (those with an
    // extra job) take one, in order.
    for (uint64_t k = 0; k < wgs; ++k) {
      const uint64_t w = x + k * plan.xcds;
      uint32_t* dst = jobs + 2 * uint64_t{offsets[w]};
      const uint64_t count = offsets[w + 1] - offsets[w];
      for (uint64_t t = 0; t < count; ++t) {
        const uint64_t q = t * wgs + (t % 2 == 1 && t < per_wg ? wgs - 1 - k : k);
        dst[2 * t] = static_cast<uint32_t>(staging[q]);
        dst[2 * t + 1] = static_cast<uint32_t>(staging[q] >> 32);
      }
    }
  }
  return true;
}

}  // namespace zyfa
