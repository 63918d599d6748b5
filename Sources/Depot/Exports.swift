// The driver SPI's types (Value, Row, SQL, DatabaseError, the dialect and
// driver protocols) are part of Depot's API: `import Depot` brings them.
@_exported import DepotDriver
