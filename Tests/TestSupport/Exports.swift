// Depot's own tests use what its users' tests use: DepotTesting and
// DepotPostgresTesting, re-exported here.
@_exported import DepotPostgresTesting
@_exported import DepotTesting
