#include "datasets/datasets.h"

#include <ctime>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace speakermem::datasets {
namespace {

using nlohmann::json;

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's algorithm: days since 1970-01-01 of a proleptic
  // Gregorian date.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool ValidDate(int y, int mo, int d) {
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[mo - 1] && !(mo == 2 && d == 29 && !leap);
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

absl::Status Bad(const std::string& where, absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", field, ": ", why));
}

Conversation& ChannelSlot(std::vector<Conversation>* out, const std::string& channel) {
  for (auto& c : *out) {
    if (c.channel == channel) return c;
  }
  out->push_back(Conversation{channel, {}, {}, {}});
  return out->back();
}

absl::Status ParseJsonlMessage(const json& j, const std::string& where, storage::Message* m) {
  if (!j.contains("speaker") || !j["speaker"].is_string()) {
    return Bad(where, "speaker", "must be a string");
  }
  if (!j.contains("text") || !j["text"].is_string()) return Bad(where, "text", "must be a string");
  m->speaker = j["speaker"].get<std::string>();
  m->text = j["text"].get<std::string>();
  m->message_id = Str(j, "message_id");
  m->speaker_id = Str(j, "speaker_id");
  m->session = Str(j, "session");
  m->reply_to = Str(j, "reply_to");
  auto ts = j.find("timestamp");
  if (ts == j.end()) ts = j.find("timestamp_ms");
  if (ts == j.end() || ts->is_null()) return Bad(where, "timestamp", "is missing");
  if (ts->is_number_integer()) {
    m->timestamp_ms = ts->get<int64_t>();
  } else if (ts->is_string()) {
    absl::StatusOr<int64_t> t = ParseIsoTime(ts->get<std::string>());
    if (!t.ok()) {
      return Bad(where, "timestamp", absl::StrCat("unparseable '", ts->get<std::string>(), "'"));
    }
    m->timestamp_ms = *t;
  } else {
    return Bad(where, "timestamp", "must be an ISO-8601 string or epoch milliseconds");
  }
  if (j.contains("turn")) {
    if (!j["turn"].is_number_integer()) return Bad(where, "turn", "must be an integer");
    int64_t turn = j["turn"].get<int64_t>();
    if (turn < 0 || turn > INT32_MAX) return Bad(where, "turn", "is out of range");
    m->turn = static_cast<int32_t>(turn);
  }
  if (j.contains("metadata")) {
    if (!j["metadata"].is_object()) return Bad(where, "metadata", "must be an object");
    for (auto it = j["metadata"].begin(); it != j["metadata"].end(); ++it) {
      m->metadata[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    }
  }
  return absl::OkStatus();
}

Question ParseJsonlQuestion(const json& j) {
  Question q;
  q.id = Str(j, "id");
  q.question = Str(j, "question");
  q.answer = Str(j, "answer");
  q.category = Str(j, "category");
  if (j.contains("evidence")) {
    if (j["evidence"].is_array()) {
      for (const auto& e : j["evidence"]) {
        if (e.is_string()) {
          for (auto& id : SplitEvidence(e.get<std::string>())) q.evidence.push_back(id);
        }
      }
    } else if (j["evidence"].is_string()) {
      q.evidence = SplitEvidence(j["evidence"].get<std::string>());
    }
  }
  return q;
}

}  // namespace

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  if (name == "auto") return Format::kAuto;
  if (name == "jsonl") return Format::kJsonl;
  if (name == "locomo") return Format::kLocomo;
  if (name == "socialmem") return Format::kSocialMem;
  return absl::InvalidArgumentError(
      absl::StrCat("format '", name, "': expected jsonl, locomo, socialmem or auto"));
}

absl::StatusOr<int64_t> ParseIsoTime(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  int n = 0;
  std::string str(s);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10) {
    return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
  }
  size_t pos = 10;
  int64_t offset_min = 0;
  if (pos < str.size()) {
    if (str[pos] != 'T' && str[pos] != ' ') {
      return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
    }
    int m = 0;
    if (std::sscanf(str.c_str() + pos + 1, "%2d:%2d%n", &h, &mi, &m) != 2 || m != 5) {
      return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
    }
    pos += 1 + m;
    if (pos < str.size() && str[pos] == ':') {
      if (std::sscanf(str.c_str() + pos + 1, "%2d%n", &sec, &m) != 1 || m != 2) {
        return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
      }
      pos += 3;
      if (pos < str.size() && (str[pos] == '.' || str[pos] == ',')) {
        ++pos;
        int digits = 0;
        while (pos < str.size() && absl::ascii_isdigit(str[pos])) {
          if (digits < 3) ms = ms * 10 + (str[pos] - '0');
          ++digits, ++pos;
        }
        if (digits == 0)
          return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
        for (int k = digits; k < 3; ++k) ms *= 10;
      }
    }
    if (pos < str.size()) {
      if (str[pos] == 'Z' && pos + 1 == str.size()) {
        pos += 1;
      } else if ((str[pos] == '+' || str[pos] == '-') && pos + 6 == str.size()) {
        int oh = 0, om = 0;
        if (std::sscanf(str.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2 || oh > 23 || om > 59) {
          return absl::InvalidArgumentError(absl::StrCat("unparseable time zone in '", s, "'"));
        }
        offset_min = (oh * 60 + om) * (str[pos] == '+' ? 1 : -1);
        pos = str.size();
      } else {
        return absl::InvalidArgumentError(absl::StrCat("unparseable time '", s, "'"));
      }
    }
  }
  if (!ValidDate(y, mo, d) || h > 23 || mi > 59 || sec > 60) {
    return absl::InvalidArgumentError(absl::StrCat("time out of range '", s, "'"));
  }
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_min * 60;
  return secs * 1000 + ms;
}

absl::StatusOr<int64_t> ParseLocomoTime(absl::string_view s) {
  static const char* kMonths[] = {"january",   "february", "march",    "april",
                                  "may",       "june",     "july",     "august",
                                  "september", "october",  "november", "december"};
  int h = 0, mi = 0, d = 0, y = 0;
  char ampm[3] = {0}, month[16] = {0};
  std::string str(absl::StripAsciiWhitespace(s));
  if (std::sscanf(str.c_str(), "%d:%d %2s on %d %15[A-Za-z], %d", &h, &mi, ampm, &d, month, &y) !=
      6) {
    return absl::InvalidArgumentError(absl::StrCat("unparseable LoCoMo time '", s, "'"));
  }
  std::string am = absl::AsciiStrToLower(ampm);
  std::string mon = absl::AsciiStrToLower(month);
  int mo = 0;
  for (int i = 0; i < 12; ++i) {
    if (mon == kMonths[i]) mo = i + 1;
  }
  if (mo == 0 || h < 1 || h > 12 || mi > 59 || (am != "am" && am != "pm") || !ValidDate(y, mo, d)) {
    return absl::InvalidArgumentError(absl::StrCat("unparseable LoCoMo time '", s, "'"));
  }
  if (h == 12) h = 0;
  if (am == "pm") h += 12;
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return (days * 86400 + h * 3600 + mi * 60) * 1000;
}

std::vector<std::string> SplitEvidence(absl::string_view s) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(s, absl::ByAnyChar(";,"))) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

absl::StatusOr<std::vector<Conversation>> LoadLocomo(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a LoCoMo file (a JSON array)"));
  }
  std::vector<Conversation> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const json& sample = doc[i];
    std::string where = absl::StrCat(path, ": sample ", i);
    if (!sample.contains("conversation") || !sample["conversation"].is_object()) {
      return Bad(where, "conversation", "missing");
    }
    const json& conv = sample["conversation"];
    Conversation c;
    c.channel = Str(sample, "sample_id");
    if (c.channel.empty()) c.channel = absl::StrCat("locomo-", i);
    c.speakers = {Str(conv, "speaker_a"), Str(conv, "speaker_b")};
    for (int s = 1;; ++s) {
      std::string key = absl::StrCat("session_", s);
      if (!conv.contains(key)) {
        // Date keys may outnumber sessions; stop at the first gap of both.
        if (!conv.contains(key + "_date_time")) break;
        continue;
      }
      if (!conv[key].is_array()) continue;
      SM_ASSIGN_OR_RETURN(int64_t base, ParseLocomoTime(Str(conv, (key + "_date_time").c_str())));
      int turn = 0;
      for (const json& t : conv[key]) {
        storage::Message m;
        m.message_id = Str(t, "dia_id");
        m.speaker = Str(t, "speaker");
        m.text = Str(t, "text");
        std::string caption = Str(t, "blip_caption");
        if (!caption.empty()) m.text = absl::StrCat(m.text, " [image: ", caption, "]");
        m.session = key;
        m.turn = turn;
        m.timestamp_ms = base + static_cast<int64_t>(turn) * 1000;
        ++turn;
        c.messages.push_back(std::move(m));
      }
    }
    if (sample.contains("qa") && sample["qa"].is_array()) {
      int qi = 0;
      for (const json& q : sample["qa"]) {
        Question out_q;
        out_q.id = absl::StrCat(c.channel, ":q", qi++);
        out_q.question = Str(q, "question");
        out_q.answer = q.contains("answer") ? Str(q, "answer") : Str(q, "adversarial_answer");
        out_q.category = Str(q, "category");
        out_q.adversarial = out_q.category == "5";
        if (q.contains("evidence") && q["evidence"].is_array()) {
          for (const json& e : q["evidence"]) {
            if (!e.is_string()) continue;
            for (auto& id : SplitEvidence(e.get<std::string>())) out_q.evidence.push_back(id);
          }
        }
        c.questions.push_back(std::move(out_q));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<Conversation> LoadSocialMem(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("sessions")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a SocialMem network (an object with sessions)"));
  }
  Conversation c;
  if (doc.contains("meta") && doc["meta"].is_object()) c.channel = Str(doc["meta"], "network_id");
  if (c.channel.empty()) {
    std::string base = path.substr(path.find_last_of('/') + 1);
    c.channel = base.substr(0, base.rfind('.'));
  }
  if (doc.contains("speakers") && doc["speakers"].is_array()) {
    for (const json& s : doc["speakers"]) {
      if (s.is_string()) c.speakers.push_back(s.get<std::string>());
    }
  }
  for (const json& session : doc["sessions"]) {
    std::string sid = Str(session, "session_id");
    int turn = 0;
    for (const json& t : session["turns"]) {
      storage::Message m;
      m.message_id = Str(t, "turn");
      std::string where = absl::StrCat(path, ": turn ", m.message_id);
      m.speaker = Str(t, "speaker");
      m.speaker_id = Str(t, "speaker_id");
      m.text = Str(t, "content");
      m.reply_to = Str(t, "reply_to");
      m.session = sid;
      m.turn = turn++;
      absl::StatusOr<int64_t> ts = ParseIsoTime(Str(t, "ts"));
      if (!ts.ok()) return Bad(where, "ts", ts.status().message());
      m.timestamp_ms = *ts;
      c.messages.push_back(std::move(m));
    }
  }
  const json* qs = nullptr;
  if (doc.contains("qa_pairs")) qs = &doc["qa_pairs"];
  if (doc.contains("questions")) qs = &doc["questions"];
  if (qs != nullptr && qs->is_array()) {
    for (const json& q : *qs) {
      Question out_q;
      out_q.id = Str(q, "id");
      out_q.question = Str(q, "question");
      out_q.answer = Str(q, "answer");
      out_q.category = Str(q, "category");
      out_q.answer_format = Str(q, "answer_format");
      out_q.correct_option = Str(q, "correct_option");
      if (q.contains("options") && q["options"].is_object()) {
        for (auto it = q["options"].begin(); it != q["options"].end(); ++it) {
          out_q.options.push_back(
              absl::StrCat(it.key(), ": ", it->is_string() ? it->get<std::string>() : it->dump()));
        }
      }
      if (q.contains("evidence_anchors") && q["evidence_anchors"].is_array()) {
        for (const json& a : q["evidence_anchors"]) {
          std::string id = Str(a, "turn_id");
          if (!id.empty()) out_q.evidence.push_back(id);
        }
      }
      c.questions.push_back(std::move(out_q));
    }
  }
  return c;
}

absl::StatusOr<std::vector<Conversation>> LoadJsonl(const std::string& path,
                                                    const std::string& default_channel) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::vector<Conversation> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    std::string where = absl::StrCat(path, ":", lineno);
    json j = json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not a JSON object"));
    }
    std::string channel = Str(j, "channel");
    if (channel.empty()) channel = default_channel;
    if (channel.empty()) {
      return Bad(where, "channel", "missing (give it per line or with --channel)");
    }
    if (j.contains("question")) {
      ChannelSlot(&out, channel).questions.push_back(ParseJsonlQuestion(j));
      continue;
    }
    storage::Message m;
    SM_RETURN_IF_ERROR(ParseJsonlMessage(j, where, &m));
    ChannelSlot(&out, channel).messages.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<std::vector<Conversation>> LoadFile(const std::string& path, Format format,
                                                   const std::string& default_channel) {
  if (format == Format::kAuto) {
    SM_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
    json doc = json::parse(text, nullptr, false);
    if (!doc.is_discarded() && doc.is_array()) {
      format = Format::kLocomo;
    } else if (!doc.is_discarded() && doc.is_object() && doc.contains("sessions")) {
      format = Format::kSocialMem;
    } else {
      format = Format::kJsonl;
    }
  }
  std::vector<Conversation> out;
  std::string dataset;
  switch (format) {
    case Format::kLocomo: {
      SM_ASSIGN_OR_RETURN(out, LoadLocomo(path));
      dataset = "locomo";
      break;
    }
    case Format::kSocialMem: {
      SM_ASSIGN_OR_RETURN(Conversation c, LoadSocialMem(path));
      if (!default_channel.empty()) c.channel = default_channel;
      out.push_back(std::move(c));
      dataset = "socialmem";
      break;
    }
    default: {
      SM_ASSIGN_OR_RETURN(out, LoadJsonl(path, default_channel));
      dataset = "jsonl";
    }
  }
  for (auto& c : out) c.dataset = dataset;
  return out;
}

}  // namespace speakermem::datasets
