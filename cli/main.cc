// det: the command-line client. All logic lives in det_cli_lib.
#include "cli/cli_context.h"

int main(int argc, char** argv) { return det::cli::RunCli(argc, argv); }
