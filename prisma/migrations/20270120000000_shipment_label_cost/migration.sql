-- What each label cost, from the rate EasyPost bought (issue 39, decision 0203): minor units and
-- the currency (lowercase ISO, as Stripe's), shown to ops beside the quote the customer paid for
-- shipping. Null for labels bought before, and where the carrier said no price.
ALTER TABLE "shipments" ADD COLUMN "label_cost" INTEGER,
ADD COLUMN "label_currency" TEXT;
