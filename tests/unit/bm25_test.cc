#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "retrieval/bm25_index.h"
#include "text/analyzer.h"

namespace speakermem::retrieval {

using text::IndexTokens;
using text::SnowballStem;
namespace {

storage::Message Msg(uint64_t seq, const std::string& text, const std::string& speaker = "",
                     const std::string& session = "", int64_t ts = 0) {
  storage::Message m;
  m.seq = seq;
  m.text = text;
  m.speaker_id = speaker;
  m.session = session;
  m.timestamp_ms = ts == 0 ? static_cast<int64_t>(seq) : ts;
  return m;
}

LexicalQuery Q(const std::string& text, size_t k = 10) {
  LexicalQuery q;
  q.text = text;
  q.k = k;
  return q;
}

TEST_CASE("BM25 scores match hand computation (k1 1.2, b 0.75)", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "apple banana"));
  index.Add(Msg(2, "apple apple cherry"));
  index.Add(Msg(3, "banana"));
  // N=3, df(apple)=2: idf = ln(1 + 1.5/2.5) = ln 1.6; avgdl = 2.
  const double idf = std::log(1.6);
  // doc 1: tf 1, len 2 -> 2.2 / (1 + 1.2) = 1.0
  // doc 2: tf 2, len 3 -> 4.4 / (2 + 1.2 * (0.25 + 0.75 * 1.5)) = 4.4 / 3.65
  auto hits = index.Search(Q("Apple?"));
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].seq == 2);
  CHECK(hits[0].score == Approx(idf * 4.4 / 3.65).epsilon(1e-5));
  CHECK(hits[1].seq == 1);
  CHECK(hits[1].score == Approx(idf * 1.0).epsilon(1e-5));
}

// Textbook Okapi BM25 written out independently of the index: documents and
// query analysed by IndexTokens, k1 1.2, b 0.75, idf ln(1 + (N - df + .5) /
// (df + .5)), each query token counted once per occurrence.
std::vector<std::pair<double, uint64_t>> ReferenceBm25(const std::vector<std::string>& docs,
                                                       const std::string& query) {
  std::vector<std::map<std::string, int>> tf(docs.size());
  std::vector<double> len(docs.size());
  std::map<std::string, int> df;
  double total = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    for (const auto& t : IndexTokens(docs[i])) ++tf[i][t];
    for (const auto& [t, c] : tf[i]) {
      ++df[t];
      len[i] += c;
    }
    total += len[i];
  }
  const double n = static_cast<double>(docs.size()), avg = total / n;
  std::vector<std::pair<double, uint64_t>> ranked;
  for (size_t i = 0; i < docs.size(); ++i) {
    double s = 0;
    for (const auto& t : IndexTokens(query)) {
      auto f = tf[i].find(t);
      if (f == tf[i].end()) continue;
      double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
      s += idf * f->second * 2.2 / (f->second + 1.2 * (0.25 + 0.75 * len[i] / avg));
    }
    if (s > 0) ranked.emplace_back(s, i + 1);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  return ranked;
}

TEST_CASE("BM25 ranks a fixed corpus exactly as a reference Okapi BM25", "[bm25]") {
  const std::vector<std::string> docs = {
      "We moved the picnic to Saturday because of the rain forecast.",
      "Saturday works for me, I'll bring the grill and some burgers.",
      "Did anyone book the venue for the quarterly drinks?",
      "The venue in Soho has booths; I booked it for Thursday.",
      "Rain or shine, the picnic is on. Bring umbrellas!",
      "I think the budget for drinks should stay under 200 pounds.",
      "Budget approved. Drinks on Thursday, picnic on Saturday.",
      "Not sure about Thursday, my team has a big handover that week.",
      "Handover week again? We should move the drinks then.",
      "Let's not move anything; the booking is non-refundable.",
      "picnic picnic picnic",
      "burgers and grill, grill and burgers"};
  Bm25Index index;
  for (size_t i = 0; i < docs.size(); ++i) index.Add(Msg(i + 1, docs[i]));
  for (const std::string query :
       {"When is the picnic?", "Who booked the venue for drinks on Thursday?", "picnic picnic rain",
        "budget for the drinks", "grill burgers Saturday", "handover week move drinks",
        "nothing matches zebra"}) {
    INFO(query);
    auto want = ReferenceBm25(docs, query);
    auto got = index.Search(Q(query, docs.size()));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].seq == want[i].second);
      CHECK(got[i].score == Approx(want[i].first).epsilon(1e-4));
    }
  }
}

TEST_CASE("BM25 counts a repeated query term once per occurrence", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "apple banana"));
  index.Add(Msg(2, "apple apple cherry"));
  index.Add(Msg(3, "banana"));
  auto one = index.Search(Q("banana"));
  auto twice = index.Search(Q("banana banana"));
  REQUIRE(one.size() == 2);
  REQUIRE(twice.size() == 2);
  CHECK(twice[0].score == Approx(2 * one[0].score).epsilon(1e-5));
}

TEST_CASE("BM25 respects k, the time range, speakers and tie order", "[bm25]") {
  Bm25Index index;
  for (uint64_t s = 1; s <= 5; ++s) {
    index.Add(Msg(s, "identical words", s % 2 ? "ann" : "bob", "", static_cast<int64_t>(s) * 10));
  }
  auto top2 = index.Search(Q("identical", 2));
  REQUIRE(top2.size() == 2);
  CHECK(top2[0].seq == 1);  // equal scores: lower seq first
  CHECK(top2[1].seq == 2);
  LexicalQuery ranged = Q("identical");
  ranged.start_ms = 20;
  ranged.end_ms = 40;
  auto r = index.Search(ranged);
  REQUIRE(r.size() == 2);
  CHECK(r[0].seq == 2);
  CHECK(r[1].seq == 3);
  LexicalQuery bob = Q("identical");
  bob.only_speakers = {"bob"};
  auto b = index.Search(bob);
  REQUIRE(b.size() == 2);
  CHECK(b[0].seq == 2);
  CHECK(b[1].seq == 4);
  bob.only_speakers = {"nobody"};
  CHECK(index.Search(bob).empty());
  CHECK(index.Search(Q("absent")).empty());
  CHECK(index.Search(Q("identical", 0)).empty());
  CHECK(index.Search(Q("the and of")).empty());  // stopwords only
}

TEST_CASE("BM25 ignores a document added twice", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(7, "hello"));
  index.Add(Msg(7, "hello"));
  CHECK(index.size() == 1);
  // Out of seq order too: an earlier seq, then each of them again.
  index.Add(Msg(9, "later"));
  index.Add(Msg(3, "earlier"));
  for (uint64_t seq : {3, 7, 9}) index.Add(Msg(seq, "again"));
  CHECK(index.size() == 3);
  CHECK(index.Search(Q("again")).empty());
}

TEST_CASE("Snowball stemming matches inflections only when asked", "[bm25]") {
  CHECK(SnowballStem("adoption") == SnowballStem("adopting"));
  CHECK(SnowballStem("running") == "run");
  CHECK(SnowballStem("東京") == "東京");
  Bm25Index index;
  index.Add(Msg(1, "We are adopting a puppy"));
  index.Add(Msg(2, "Nothing related here"));
  CHECK(index.Search(Q("adoption")).empty());
  LexicalQuery q = Q("adoption");
  q.params.stem = true;
  auto hits = index.Search(q);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].seq == 1);
}

TEST_CASE("The speaker field adds weight x the named speaker's idf", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "the budget is fine", "ann"));
  index.Add(Msg(2, "budget talk again", "bob"));
  index.Add(Msg(3, "lunch anyone", "bob"));
  index.Add(Msg(4, "lunch at noon", "cy"));
  LexicalQuery q = Q("budget");
  q.named_speakers = {"bob"};
  q.params.speaker_weight = 2.0;
  auto plain = index.Search(Q("budget"));
  auto hits = index.Search(q);
  // bob wrote 2 of 4 messages: idf = ln(1 + 2.5/2.5) = ln 2.
  const double field = 2.0 * std::log(2.0);
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].seq == 2);
  std::map<uint64_t, double> before, after;
  for (const auto& h : plain) before[h.seq] = h.score;
  for (const auto& h : hits) after[h.seq] = h.score;
  CHECK(after[2] == Approx(before[2] + field).epsilon(1e-5));
  CHECK(after[1] == Approx(before[1]).epsilon(1e-5));  // ann: unchanged
  CHECK(after[3] == Approx(field).epsilon(1e-5));      // bob's message without the word
  CHECK(after.count(4) == 0);
}

TEST_CASE("Context: a message inherits its best same-session neighbour's score", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "what are you reading lately", "ann", "s1"));
  index.Add(Msg(2, "a novel about lighthouses", "bob", "s1"));
  index.Add(Msg(3, "sounds lovely", "ann", "s1"));
  index.Add(Msg(5, "other session entirely", "bob", "s2"));
  index.Add(Msg(4, "ok", "cy", "s1"));  // out of seq order: neighbours follow seq
  LexicalQuery q = Q("lighthouses");
  q.params.context_weight = 0.5;
  q.params.context_window = 2;
  q.params.context_decay = 0.5;
  auto hits = index.Search(q);
  std::map<uint64_t, double> s;
  for (const auto& h : hits) s[h.seq] = h.score;
  REQUIRE(s.count(2));
  const double own = s[2];
  CHECK(s[1] == Approx(0.5 * own));        // distance 1
  CHECK(s[3] == Approx(0.5 * own));        // distance 1
  CHECK(s[4] == Approx(0.5 * 0.5 * own));  // distance 2 (seq 4 sits after 3)
  CHECK(s.count(5) == 0);                  // another session
}

TEST_CASE("Context scores follow the definition whether few or most messages are scored",
          "[bm25]") {
  // Naming a speaker scores every message they wrote: context is then added
  // by one pass over the channel, otherwise along the scored list. Both
  // must equal context applied by hand to the context-free scores.
  Bm25Index index;
  const char* words[] = {"kayak", "lake", "budget", "lunch", "novel", "train", "rain", "tea"};
  const char* people[] = {"ann", "bob", "cy", "dee"};
  uint32_t x = 12345;
  auto next = [&x] { return x = x * 1103515245u + 12345u, (x >> 16) & 0x7fff; };
  const size_t n = 600;
  std::vector<std::string> session(n + 1);
  for (uint64_t seq = 1; seq <= n; ++seq) {
    std::string text;
    for (int w = 0; w < 4; ++w) absl::StrAppend(&text, words[next() % 8], " ");
    if (next() % 40 == 0) absl::StrAppend(&text, "zeppelin");  // rare: few scored
    session[seq] = absl::StrCat("s", seq / 37);
    index.Add(Msg(seq, text, people[next() % 4], session[seq]));
  }
  for (bool named : {false, true}) {
    LexicalQuery q = Q("zeppelin novel", n);
    q.params.speaker_weight = 2.0;
    if (named) {
      q.named_speakers = {"bob", "cy"};
    } else {
      q.text = "zeppelin";
    }
    LexicalQuery plain = q;
    q.params.context_weight = 0.5;
    q.params.context_window = 2;
    q.params.context_decay = 0.7;
    std::vector<double> own(n + 2, 0.0);
    for (const auto& h : index.Search(plain)) own[h.seq] = h.score;
    std::map<uint64_t, double> want;
    for (uint64_t seq = 1; seq <= n; ++seq) {
      double inherited = 0;
      for (uint64_t d = 1; d <= 2; ++d) {
        for (uint64_t other : {seq - d, seq + d}) {
          if (other < 1 || other > n || session[other] != session[seq]) continue;
          inherited = std::max(inherited, own[other] * (d == 1 ? 1.0 : 0.7));
        }
      }
      if (own[seq] + 0.5 * inherited > 0) want[seq] = own[seq] + 0.5 * inherited;
    }
    auto hits = index.Search(q);
    INFO((named ? "most messages scored" : "few messages scored"));
    REQUIRE(hits.size() == want.size());
    for (const auto& h : hits) CHECK(h.score == Approx(want[h.seq]).epsilon(1e-5));
  }
}

TEST_CASE("Pseudo-relevance feedback finds a message that shares no query word", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "kayak trip on the lake"));
  index.Add(Msg(2, "kayak paddles lake weekend"));
  index.Add(Msg(3, "paddles weekend booking confirmed"));
  index.Add(Msg(4, "dentist appointment"));
  index.Add(Msg(5, "groceries list"));
  LexicalQuery q = Q("kayak");
  q.params.prf_weight = 0.5;
  q.params.prf_docs = 2;
  q.params.prf_terms = 5;
  std::set<uint64_t> found;
  for (const auto& h : index.Search(q)) found.insert(h.seq);
  CHECK(found.count(3) == 1);
  CHECK(found.count(4) == 0);
}

TEST_CASE("after_seq keeps only later messages, scored as in the full search", "[bm25]") {
  for (bool in_order : {true, false}) {
    INFO(in_order);
    Bm25Index index;
    const std::vector<uint64_t> seqs =
        in_order ? std::vector<uint64_t>{1, 2, 3, 4, 5} : std::vector<uint64_t>{1, 4, 2, 5, 3};
    for (uint64_t seq : seqs) {
      index.Add(Msg(seq, seq % 2 ? "venue in Porto" : "venue booked", seq % 2 ? "ann" : "bob"));
    }
    LexicalQuery all = Q("venue Porto");
    all.named_speakers = {"ann"};
    all.params.speaker_weight = 1.0;
    LexicalQuery tail = all;
    tail.after_seq = 3;
    std::map<uint64_t, double> full;
    for (const auto& h : index.Search(all)) full[h.seq] = h.score;
    auto hits = index.Search(tail);
    REQUIRE(hits.size() == 2);
    for (const auto& h : hits) {
      CHECK(h.seq > 3);
      CHECK(h.score == Approx(full[h.seq]).epsilon(1e-6));
    }
  }
}

TEST_CASE("BestPerSpeaker equals a one-speaker search of each", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "the venue in Porto is lovely", "ann", "s1"));
  index.Add(Msg(2, "Porto venue booked for May", "bob", "s1"));
  index.Add(Msg(3, "I prefer the Lisbon venue", "ann", "s1"));
  index.Add(Msg(4, "no idea about venues", "cy", "s1"));
  index.Add(Msg(5, "lunch?", "dee", "s1"));
  LexicalQuery q = Q("Porto venue");
  q.params.stem = true;
  q.params.context_weight = 0.5;
  q.only_speakers = {"ann", "bob", "cy", "dee", "nobody"};
  auto best = index.BestPerSpeaker(q);
  for (const std::string who : {"ann", "bob", "cy", "dee"}) {
    INFO(who);
    LexicalQuery one = q;
    one.only_speakers = {who};
    one.k = 1;
    auto hits = index.Search(one);
    if (hits.empty()) {
      CHECK(best.count(who) == 0);
      continue;
    }
    REQUIRE(best.count(who) == 1);
    CHECK(best.at(who).seq == hits[0].seq);
    CHECK(best.at(who).score == Approx(hits[0].score));
  }
  CHECK(best.count("nobody") == 0);
}

TEST_CASE("Search's per-speaker best is BestPerSpeaker on the stemmed terms alone", "[bm25]") {
  Bm25Index index;
  index.Add(Msg(1, "the venue in Porto is lovely", "ann", "s1", 100));
  index.Add(Msg(2, "Porto venue booked for May", "bob", "s1", 200));
  index.Add(Msg(3, "I prefer the Lisbon venues", "ann", "s1", 300));
  index.Add(Msg(4, "no idea about venues, ask ann", "cy", "s2", 400));
  index.Add(Msg(5, "lunch?", "dee", "s2", 500));
  index.Add(Msg(6, "booked the Porto flights", "bob", "s2", 600));
  index.Add(Msg(7, "ann: Porto it is", "cy", "s3", 700));
  for (const auto& [start, end] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {150, 650}}) {
    INFO(start << ".." << end);
    // Recall's query: every feature on, a named speaker, a time range.
    LexicalQuery q = Q("which Porto venue was booked", 3);
    q.start_ms = start;
    q.end_ms = end;
    q.params.stem = true;
    q.params.speaker_weight = 0.8;
    q.named_speakers = {"ann"};
    q.params.prf_weight = 0.3;
    q.params.prf_docs = 2;
    q.params.context_weight = 0.5;
    std::map<std::string, ScoredSeq> kept;
    const std::vector<ScoredSeq> hits = index.Search(q, &kept);
    // The hits are Search's without the map.
    const std::vector<ScoredSeq> plain = index.Search(q);
    REQUIRE(hits.size() == plain.size());
    for (size_t i = 0; i < hits.size(); ++i) {
      CHECK(hits[i].seq == plain[i].seq);
      CHECK(hits[i].score == plain[i].score);
    }
    // The map is what System 2's fallbacks asked for before: the same text,
    // stemmed, in the same range, nothing else.
    LexicalQuery terms = Q(q.text);
    terms.start_ms = start;
    terms.end_ms = end;
    terms.params.stem = true;
    terms.only_speakers = {"ann", "bob", "cy", "dee"};
    const std::map<std::string, ScoredSeq> want = index.BestPerSpeaker(terms);
    REQUIRE(kept.size() == want.size());
    CHECK(kept.count("dee") == 0);  // no query term
    for (const auto& [who, best] : want) {
      INFO(who);
      REQUIRE(kept.count(who) == 1);
      CHECK(kept.at(who).seq == best.seq);
      CHECK(kept.at(who).score == best.score);
    }
  }
  std::map<std::string, ScoredSeq> none = {{"stale", ScoredSeq{9, 1.0f}}};
  index.Search(Q("nothing matches this"), &none);
  CHECK(none.empty());
}

TEST_CASE("LexicalIndex keeps channels apart", "[bm25]") {
  LexicalIndex index;
  storage::ChannelRef a{"t", "a"}, b{"t", "b"}, other_tenant{"u", "a"};
  index.Add(a, Msg(1, "picnic on saturday"));
  index.Add(b, Msg(1, "meeting on monday"));
  CHECK(index.Search(a, Q("picnic", 5)).size() == 1);
  CHECK(index.Search(b, Q("picnic", 5)).empty());
  CHECK(index.Search(other_tenant, Q("picnic", 5)).empty());
  CHECK(index.ChannelCount() == 2);
}

}  // namespace
}  // namespace speakermem::retrieval
