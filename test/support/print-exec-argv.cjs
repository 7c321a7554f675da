// Preloaded through NODE_OPTIONS: prints the flags the process was started with on its command
// line (a shebang's among them; NODE_OPTIONS' own are not in execArgv) and exits before the program.
process.stdout.write(JSON.stringify(process.execArgv) + '\n');
process.exit(0);
