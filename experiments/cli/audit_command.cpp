#include <cstdio>
#include <string>
#include <vector>

#include "experiments/audit/audit.h"
#include "experiments/cli/audit_options.h"
#include "experiments/cli/commands.h"

namespace dtbench::experiments {

// Exit 0 when the ledger is clean, 1 when it is not; a missing rank's ledger or an unreadable file
// propagates as an error (1), a missing RUNDIR or ledger as a usage error (2).
int runAuditCommand(const std::vector<std::string>& args) {
  const AuditOptions o = parseAuditOptions(args);
  if (o.help) {
    std::printf("%s\n", o.helpText.c_str());
    return 0;
  }
  const audit::AuditResult result = audit::auditRunDirectory(o.directory, static_cast<size_t>(o.show));
  std::printf("%s", audit::renderAudit(result, o.directory).c_str());
  return result.clean() ? 0 : 1;
}

}  // namespace dtbench::experiments
