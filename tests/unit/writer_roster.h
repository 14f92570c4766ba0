// The roster the Writer unit tests share.
#ifndef SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_
#define SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_

#include <vector>

#include "writer/writer_model.h"

namespace speakermem::writer::testing {

inline std::vector<WriterRosterMember> Roster() {
  return {{"alice", {"Alice"}}, {"bob", {"Bob"}}, {"chen", {"Chen"}}, {"dana", {"Dana"}}};
}

}  // namespace speakermem::writer::testing

#endif  // SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_
