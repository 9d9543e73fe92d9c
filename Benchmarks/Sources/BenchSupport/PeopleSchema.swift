// The schema both SQL benchmarks (SQLBench on SQLite, PGBench on PostgreSQL) lower against, as
// the JSON a `Schema` decodes, so the two dialects are measured on the very same mapping.

/// Person (name, city, age, score) with an ordered to-many `kids` of Kid (name, age).
public let peopleSchemaJSON = """
    {"entities": [
      {"name": "Person", "table": "person",
       "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string"},
                      {"name": "age", "type": "integer"}, {"name": "score", "type": "double"}],
       "relationships": [{"name": "kids", "toMany": "Kid", "foreignKey": "parent_id", "orderColumn": "id"}]},
      {"name": "Kid", "table": "kid",
       "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}]}
    ]}
    """
