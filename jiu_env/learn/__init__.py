"""Learning from the engines: training data from search, a policy-value network, players that use it."""
