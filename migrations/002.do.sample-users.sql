-- The tutorial's two users (docs/contract.md, "Sample data"), ids 1 and 2 of a fresh database, once.
INSERT INTO users (item) VALUES
  ('{"name":"Isaac Newton","age":372,"email":"isaac@newton.co.uk","registration_date":"1683-03-01"}'),
  ('{"name":"Albert Einstein","age":136,"email":"ae@mc2.org","registration_date":"1905-12-01"}');
