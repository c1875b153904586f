-- Runs once, when the postgres volume is first created: the selfhost profile's app gets a
-- database of its own, so it never shares orders with the app driven by the dev server.
CREATE DATABASE shop_selfhost;
