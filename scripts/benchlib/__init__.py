"""modelfs's benchmark suite, run as scripts/bench: shared helpers here
(common, mount, results, context, inputs, measure), one module per section
in sections/, the command line in main."""
