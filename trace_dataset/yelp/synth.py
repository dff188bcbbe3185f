"""The built-in synthetic Yelp bundle: same files, fields, types and quirks as the real dump; not Yelp data.

`write_synthetic_bundle(out_dir, seed=42, scale=1.0)` writes `yelp_academic_dataset_business.json`,
`yelp_academic_dataset_review.json` and `TRACE_SYNTHETIC.json` (the manifest that marks the bundle as
synthetic, so that everything built from it says `source: synthetic`).

What it holds, per Trace city (around the real centre of each of the 8 cities):
- restaurants (cuisines with named dishes), hotels (with room features and amenities) and attractions
  (museums, parks, gardens, tours, nightlife, zoos, theatres, landmarks, casinos), placed in dense
  neighbourhood clusters (many POIs within 500 m of each other) plus a spread over ~12 km;
- stars (mean about 3.8), Yelp `review_count`, `RestaurantsPriceRange2`, and the attributes Trace reads,
  written as Yelp writes them: stringified Python literals (`"u'free'"`, `"'average'"`, `"None"`,
  `"{'garage': False, 'lot': True}"`), comma-separated `categories`, `hours` null or a dict, `/` escaped as
  `\\/`, city spelling variants ("St. Louis", "St Louis", "new  orleans");
- some businesses that are not tourism (dentists, car rental, ...) and some in other cities, so the classifier
  and the city filter have work to do; some POIs with fewer than 3 reviews in the file.

Scale: at `scale=1.0` each city x type cell has 135 POIs (so `kb build --per-cell 100` has spares) and about
70k reviews in total. Below 1 the number of POIs per cell shrinks linearly (tests use 0.1); above 1 both the
POIs per cell and the reviews per POI grow with sqrt(scale), so the review file grows linearly: scale 17 writes
about 1M reviews (the benchmark's bundle). Same seed and scale -> byte-identical files.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CITIES,
    CITY_LANDMARKS,
    CITY_NAMES,
    SEED,
    YELP_BUSINESS_FILE,
    YELP_REVIEW_FILE,
)
from trace_dataset.io import atomic_open, write_json
from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST
from trace_dataset.yelp.review_text import FIRST_NAMES, PoiFacts, compose_review

log = logging.getLogger(__name__)

SYNTH_VERSION = "1"
BASE_POIS_PER_CELL = 135
REVIEW_MEDIAN = 13.0  # median of the lognormal part of reviews per POI (plus 3), at scale <= 1
REVIEW_SIGMA = 0.75
FEW_REVIEWS_SHARE = 0.06  # POIs with 0-2 reviews in the file (filtered out by --min-reviews 3)
NON_TOURISM_SHARE = 0.12  # of businesses per city
OTHER_CITY_SHARE = 0.10  # of all businesses
BLOCK = 256  # businesses whose reviews are interleaved (shuffled) together in the review file
ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
DATE_START = datetime(2008, 1, 1)
DATE_SPAN_S = int((datetime(2022, 1, 19) - DATE_START).total_seconds())

# ---------------------------------------------------------------------------------------------------
# Catalogue: kinds of POI, their Yelp categories and their POI-specific details
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    name: str
    poi_type: str  # restaurant | hotel | attraction | other
    categories: tuple[str, ...]  # always present
    optional: tuple[str, ...]  # some of these are added
    items: tuple[str, ...]  # signature dishes / room features / exhibits
    nouns: tuple[str, ...]  # name nouns ("Trattoria", "Inn", "Museum of Art")
    price: tuple[int, ...]  # price levels it draws from
    cities: tuple[str, ...] = ()  # favoured in these cities (weight x3)


K = Kind
RESTAURANT_KINDS: tuple[Kind, ...] = (
    K("italian", "restaurant", ("Restaurants", "Italian"), ("Pizza", "Wine Bars", "Bars", "Nightlife", "Sicilian", "Salad", "Caterers"),
      ("wild mushroom risotto", "cacio e pepe", "margherita pizza", "veal saltimbocca", "tiramisu",
       "burrata with heirloom tomatoes", "lasagna bolognese", "gnocchi in brown butter", "osso buco",
       "linguine with clams", "toasted ravioli", "arancini", "cannoli"),
      ("Trattoria", "Osteria", "Ristorante", "Cucina", "Pasta House"), (2, 2, 3, 3, 4), ("Saint Louis", "Philadelphia")),
    K("mexican", "restaurant", ("Restaurants", "Mexican"), ("Tacos", "Tex-Mex", "Bars", "Nightlife", "Latin American", "Salvadoran", "Juice Bars & Smoothies"),
      ("carnitas tacos", "mole enchiladas", "chile relleno", "fish tacos", "elote", "pork tamales",
       "carne asada burrito", "churros", "tableside guacamole", "pozole", "queso fundido", "al pastor tacos"),
      ("Taqueria", "Cantina", "Cocina", "Mexican Kitchen"), (1, 1, 2, 2), ("Tucson",)),
    K("sonoran", "restaurant", ("Restaurants", "Mexican", "Tex-Mex"), ("Food Trucks",),
      ("Sonoran hot dog", "carne seca", "chimichanga", "cheese crisp", "green corn tamales", "menudo",
       "birria tacos", "horchata"),
      ("Sonoran Grill", "Cocina", "Hot Dogs"), (1, 1, 2), ("Tucson",)),
    K("seafood", "restaurant", ("Restaurants", "Seafood"), ("Bars", "Cocktail Bars", "Nightlife", "Live/Raw Food", "Fish & Chips", "Seafood Markets"),
      ("char-grilled oysters", "shrimp and grits", "blackened redfish", "crab cakes", "lobster roll",
       "fried catfish", "seafood gumbo", "clam chowder", "grilled octopus", "tuna tartare", "raw oysters",
       "grouper sandwich"),
      ("Oyster Bar", "Fish House", "Seafood Kitchen", "Crab Shack"), (2, 2, 3, 3), ("New Orleans", "Tampa")),
    K("cajun", "restaurant", ("Restaurants", "Cajun/Creole"), ("Seafood", "Southern", "Breakfast & Brunch"),
      ("crawfish etouffee", "jambalaya", "red beans and rice", "shrimp po'boy", "beignets", "turtle soup",
       "boudin balls", "shrimp creole", "chargrilled oysters", "bread pudding"),
      ("Creole Kitchen", "Cafe", "Bistro", "Po-Boys"), (1, 2, 2, 3), ("New Orleans",)),
    K("barbeque", "restaurant", ("Restaurants", "Barbeque"), ("Southern", "Beer Bar", "Nightlife"),
      ("smoked brisket", "pulled pork", "burnt ends", "St. Louis ribs", "smoked wings", "mac and cheese",
       "banana pudding", "smoked turkey", "cornbread", "rib tips"),
      ("Smokehouse", "BBQ", "Pit", "Barbecue Co."), (1, 2, 2), ("Saint Louis", "Nashville")),
    K("southern", "restaurant", ("Restaurants", "Southern"), ("Soul Food", "Comfort Food", "Breakfast & Brunch"),
      ("hot chicken", "biscuits and gravy", "collard greens", "chicken and waffles", "pimento cheese",
       "peach cobbler", "meat and three", "fried green tomatoes", "shrimp and grits", "pork tenderloin sandwich"),
      ("Kitchen", "Table", "Diner", "Hot Chicken"), (1, 2, 2), ("Nashville", "Indianapolis")),
    K("sushi", "restaurant", ("Restaurants", "Japanese", "Sushi Bars"), ("Ramen", "Asian Fusion"),
      ("spicy tuna roll", "salmon nigiri", "dragon roll", "omakase sushi", "chirashi bowl", "gyoza", "sushi boat",
       "miso black cod", "yellowtail sashimi", "tempura udon", "tonkotsu ramen"),
      ("Sushi", "Sushi Bar", "Izakaya", "Ramen House"), (2, 2, 3, 4)),
    K("chinese", "restaurant", ("Restaurants", "Chinese"), ("Dim Sum", "Szechuan", "Noodles", "Cantonese", "Hot Pot", "Seafood"),
      ("soup dumplings", "mapo tofu", "dan dan noodles", "General Tso's chicken", "Peking duck",
       "scallion pancakes", "salt and pepper shrimp", "hot pot", "char siu bao", "dry pot"),
      ("Dumpling House", "Garden", "Kitchen", "Noodle Bar"), (1, 1, 2, 2)),
    K("thai", "restaurant", ("Restaurants", "Thai"), ("Noodles", "Vegetarian"),
      ("pad see ew", "green curry", "tom kha soup", "drunken noodles", "papaya salad", "khao soi",
       "mango sticky rice", "larb", "massaman curry", "crispy pork belly"),
      ("Thai Kitchen", "Thai Cafe", "Siam", "Thai Bistro"), (1, 2, 2)),
    K("indian", "restaurant", ("Restaurants", "Indian"), ("Vegetarian", "Halal", "Buffets"),
      ("chicken tikka masala", "lamb vindaloo", "garlic naan", "saag paneer", "samosas", "goat biryani",
       "chana masala", "mango lassi", "butter chicken", "dosa"),
      ("Tandoor", "Curry House", "Indian Kitchen", "Masala"), (1, 2, 2)),
    K("american", "restaurant", ("Restaurants", "American (New)"), ("Bars", "Nightlife", "Burgers", "Salad", "Gastropubs", "Farm-to-table", "Wine Bars", "Venues & Event Spaces"),
      ("smash burger", "truffle fries", "roasted half chicken", "beet salad", "crispy pork belly", "braised short rib",
       "charred brussels sprouts", "seasonal flatbread", "deviled eggs", "pork tenderloin sandwich"),
      ("Kitchen", "Tavern", "Grill", "Eatery", "Public House"), (2, 2, 3), ("Indianapolis", "Reno")),
    K("steakhouse", "restaurant", ("Restaurants", "Steakhouses"), ("Seafood", "Wine Bars", "Cocktail Bars"),
      ("dry-aged ribeye", "filet mignon", "creamed spinach", "wedge salad", "bone-in strip", "lobster mac",
       "loaded baked potato", "chocolate lava cake", "shrimp cocktail", "tomahawk chop"),
      ("Steakhouse", "Chop House", "Prime", "Steak & Oyster"), (3, 3, 4, 4)),
    K("breakfast", "restaurant", ("Restaurants", "Breakfast & Brunch"), ("American (Traditional)", "Cafes", "Diners"),
      ("eggs benedict", "lemon ricotta pancakes", "chicken and waffles", "breakfast burrito", "biscuits and gravy",
       "avocado toast", "brioche French toast", "huevos rancheros", "shrimp and grits", "corned beef hash"),
      ("Brunch House", "Pancake House", "Morning Cafe", "Diner"), (1, 2, 2)),
    K("cafe", "restaurant", ("Coffee & Tea", "Cafes"), ("Bakeries", "Food", "Restaurants", "Desserts"),
      ("oat milk latte", "cold brew", "almond croissant", "breakfast sandwich", "chai latte", "blueberry muffin",
       "matcha latte", "spinach quiche", "cinnamon roll", "cortado"),
      ("Coffee", "Coffee Co.", "Espresso Bar", "Cafe"), (1, 1, 2)),
    K("vegan", "restaurant", ("Restaurants", "Vegan", "Vegetarian"), ("Gluten-Free", "Juice Bars & Smoothies"),
      ("jackfruit tacos", "cauliflower wings", "Buddha bowl", "vegan burger", "lentil soup", "cashew cheese plate",
       "tempeh reuben", "acai bowl", "vegan chocolate cake"),
      ("Plant Kitchen", "Green Table", "Vegan Cafe"), (1, 2, 2)),
    K("mediterranean", "restaurant", ("Restaurants", "Mediterranean", "Greek"), ("Middle Eastern", "Halal"),
      ("lamb gyro", "falafel plate", "hummus with lamb", "chicken shawarma", "spanakopita", "baklava",
       "Greek salad", "chicken souvlaki", "grilled halloumi", "lamb chops"),
      ("Taverna", "Grill", "Mezze House"), (1, 2, 2, 3)),
    K("cheesesteak", "restaurant", ("Restaurants", "Cheesesteaks", "Sandwiches"), ("Fast Food", "Delis"),
      ("cheesesteak wit", "roast pork sandwich", "Italian hoagie", "cheese fries", "chicken cheesesteak",
       "pizza steak"),
      ("Steaks", "Hoagies", "Sandwich Shop"), (1, 1), ("Philadelphia",)),
    K("cuban", "restaurant", ("Restaurants", "Cuban"), ("Latin American", "Sandwiches", "Bakeries"),
      ("Cuban sandwich", "ropa vieja", "deviled crab", "picadillo", "cafe con leche", "yellow rice and chicken",
       "tostones", "guava pastry", "black bean soup"),
      ("Cuban Cafe", "Cafeteria", "Sandwich Shop"), (1, 1, 2), ("Tampa",)),
    K("korean", "restaurant", ("Restaurants", "Korean"), ("Barbeque", "Asian Fusion", "Soup"),
      ("bulgogi", "bibimbap in a stone pot", "kimchi fried rice", "Korean fried chicken", "japchae", "galbi",
       "soft tofu stew", "scallion seafood pancake"),
      ("Korean BBQ", "Kitchen", "Tofu House"), (2, 2, 3)),
    K("vietnamese", "restaurant", ("Restaurants", "Vietnamese"), ("Noodles", "Sandwiches", "Soup"),
      ("pho tai", "banh mi", "bun bo hue", "spring rolls", "broken rice with pork chop", "Vietnamese iced coffee",
       "crispy egg rolls", "vermicelli bowl"),
      ("Pho", "Banh Mi Shop", "Noodle House"), (1, 1, 2), ("New Orleans", "Philadelphia")),
    K("caribbean", "restaurant", ("Restaurants", "Caribbean"), ("Cuban", "Trinidadian", "Jamaican", "Puerto Rican"),
      ("jerk chicken", "oxtail stew", "curry goat", "beef patties", "plantains", "rice and peas", "doubles"),
      ("Island Kitchen", "Caribbean Grill", "Jerk Shack"), (1, 2), ("Tampa",)),
    K("ethiopian", "restaurant", ("Restaurants", "Ethiopian"), ("African", "Vegetarian", "Vegan"),
      ("doro wat", "veggie combo on injera", "kitfo", "tibs", "shiro", "honey wine"),
      ("Ethiopian Restaurant", "Injera House"), (1, 2), ("Philadelphia", "Indianapolis")),
    K("basque", "restaurant", ("Restaurants", "Basque", "Spanish"), ("Tapas Bars", "Wine Bars"),
      ("lamb chops", "Picon punch", "oxtail stew", "family-style soup", "garlic fries", "paella", "croquetas"),
      ("Basque Hotel Dining Room", "Basque Restaurant", "Tapas House"), (2, 3), ("Reno",)),
    K("french", "restaurant", ("Restaurants", "French"), ("Wine Bars", "Bakeries", "Brasseries"),
      ("steak frites", "duck confit", "French onion soup", "croque madame", "moules frites", "creme brulee",
       "escargots", "coq au vin"),
      ("Bistro", "Brasserie", "Cafe", "Maison"), (3, 3, 4)),
    K("tapas", "restaurant", ("Restaurants", "Tapas/Small Plates"), ("Spanish", "Wine Bars", "Cocktail Bars"),
      ("patatas bravas", "gambas al ajillo", "jamon iberico", "bacon-wrapped dates", "seafood paella", "churros with chocolate"),
      ("Tapas Bar", "Small Plates", "Bodega"), (2, 3)),
    K("diner", "restaurant", ("Restaurants", "Diners", "American (Traditional)"), ("Breakfast & Brunch", "Burgers"),
      ("patty melt", "chili cheese fries", "chocolate malt", "country fried steak", "club sandwich", "short stack"),
      ("Diner", "Grill", "Luncheonette"), (1, 1, 2)),
    K("burgers", "restaurant", ("Restaurants", "Burgers"), ("Fast Food", "Hot Dogs", "American (Traditional)", "Beer Bar"),
      ("double cheeseburger", "onion rings", "milkshake", "bison burger", "sweet potato fries", "veggie burger"),
      ("Burger Bar", "Burgers", "Burger Joint"), (1, 1, 2)),
    K("gastropub", "restaurant", ("Restaurants", "Gastropubs", "Pubs"), ("Beer Bar", "Nightlife", "Irish", "British"),
      ("fish and chips", "shepherd's pie", "Scotch egg", "pub burger", "beer cheese soup", "bangers and mash"),
      ("Public House", "Pub", "Alehouse"), (2, 2)),
    K("poke", "restaurant", ("Restaurants", "Poke", "Hawaiian"), ("Salad", "Seafood"),
      ("ahi poke bowl", "spicy salmon bowl", "musubi", "shoyu tuna", "acai bowl"),
      ("Poke", "Poke Bar"), (1, 2)),
    K("bakery", "restaurant", ("Bakeries", "Food"), ("Desserts", "Coffee & Tea", "Patisserie/Cake Shop", "Cupcakes"),
      ("kouign-amann", "sourdough loaf", "pain au chocolat", "king cake", "cupcakes", "fruit tart", "morning bun"),
      ("Bakery", "Bakeshop", "Patisserie"), (1, 2)),
    K("desserts", "restaurant", ("Desserts", "Ice Cream & Frozen Yogurt", "Food"), ("Gelato", "Donuts", "Shaved Ice"),
      ("salted caramel gelato", "sundae", "shaved ice", "brown butter donut", "affogato", "banana split"),
      ("Creamery", "Gelato", "Sweets"), (1, 1)),
    K("food_truck", "restaurant", ("Food Trucks", "Food"), ("Street Vendors", "Tacos", "Hot Dogs", "Filipino"),
      ("birria quesadilla", "loaded fries", "Korean tacos", "lumpia", "smash burger", "elote cup"),
      ("Food Truck", "Street Eats", "Truck"), (1,)),
    K("pizza", "restaurant", ("Restaurants", "Pizza"), ("Italian", "Salad", "Chicken Wings", "Beer Bar"),
      ("pepperoni pie", "white pizza", "garlic knots", "calzone", "Detroit-style square", "Sicilian slice",
       "Provel pizza", "hot honey pizza"),
      ("Pizza", "Pizzeria", "Pizza Co.", "Slice Shop"), (1, 1, 2), ("Saint Louis",)),
)
HOTEL_KINDS: tuple[Kind, ...] = (
    K("full_service", "hotel", ("Hotels & Travel", "Hotels"), ("Event Planning & Services", "Venues & Event Spaces", "Airport Shuttles", "Restaurants"),
      ("a view of the skyline", "floor-to-ceiling windows", "a huge walk-in shower", "a separate sitting area",
       "a desk by the window", "a balcony", "a Nespresso machine", "a deep soaking tub"),
      ("Hotel", "Grand Hotel", "Hotel & Conference Center", "Marriott-style Tower"), (2, 3, 3, 4)),
    K("boutique", "hotel", ("Hotels", "Hotels & Travel"), ("Bars", "Cocktail Bars", "Restaurants"),
      ("exposed brick walls", "a claw-foot tub", "a record player", "original hardwood floors", "a rainfall shower",
       "local art on the walls", "a rooftop terrace", "velvet armchairs"),
      ("Hotel", "House Hotel", "Boutique Hotel"), (3, 3, 4)),
    K("budget", "hotel", ("Hotels", "Hotels & Travel"), ("Motels",),
      ("a microwave and mini fridge", "two queen beds", "a kitchenette", "a parking spot at the door",
       "a desk and fast wifi", "an exterior corridor"),
      ("Inn & Suites", "Motor Lodge", "Express Inn", "Budget Inn"), (1, 1, 2)),
    K("bnb", "hotel", ("Bed & Breakfast", "Hotels & Travel"), ("Hotels",),
      ("a four-poster bed", "a wraparound porch", "a garden courtyard", "homemade breakfast", "a fireplace",
       "antique furniture", "a private balcony"),
      ("Bed & Breakfast", "Guest House", "Manor Inn"), (2, 2, 3)),
    K("resort", "hotel", ("Resorts", "Hotels", "Hotels & Travel"), ("Day Spas", "Golf", "Beauty & Spas"),
      ("a mountain view patio", "a private casita", "a lazy river", "a balcony over the pool", "a spa tub",
       "a fire pit terrace"),
      ("Resort & Spa", "Resort", "Golf Resort"), (3, 4, 4), ("Tucson", "Reno", "Tampa")),
    K("casino_hotel", "hotel", ("Hotels", "Casinos", "Hotels & Travel"), ("Arts & Entertainment", "Buffets"),
      ("a view of the mountains", "a jacuzzi suite", "a corner room", "a renovated tower room"),
      ("Casino Resort", "Hotel Casino", "Tower Hotel"), (2, 2, 3), ("Reno",)),
    K("hostel", "hotel", ("Hostels", "Hotels & Travel"), (),
      ("bunk beds with curtains", "lockers", "a shared kitchen", "a common room with games"),
      ("Hostel", "Backpackers"), (1,)),
    K("extended_stay", "hotel", ("Hotels", "Hotels & Travel"), ("Apartments",),
      ("a full kitchen", "a washer and dryer", "a separate bedroom", "a work desk"),
      ("Extended Stay", "Suites", "Residence"), (2, 2)),
)
ATTRACTION_KINDS: tuple[Kind, ...] = (
    K("museum_art", "attraction", ("Museums", "Art Museums", "Arts & Entertainment"), ("Art Galleries", "Cafes"),
      ("impressionist gallery", "contemporary wing", "sculpture garden", "photography exhibit",
       "Asian art collection", "glass art room", "folk art collection", "Renaissance gallery"),
      ("Museum of Art", "Art Museum", "Art Center"), (1, 2)),
    K("museum_history", "attraction", ("Museums", "Arts & Entertainment"), ("Landmarks & Historical Buildings", "Tours", "Libraries", "Cultural Center"),
      ("Civil War gallery", "civil rights exhibit", "riverboat exhibit", "pioneer history room", "old maps collection",
       "World War II exhibit", "music history hall", "streetcar exhibit"),
      ("History Museum", "Historical Society", "Heritage Center"), (1, 2)),
    K("museum_science", "attraction", ("Museums", "Arts & Entertainment"), ("Planetarium", "Children's Museums", "Education"),
      ("planetarium show", "dinosaur hall", "hands-on physics lab", "butterfly house", "mini city for kids",
       "water play area", "space gallery", "insectarium"),
      ("Science Center", "Children's Museum", "Discovery Museum"), (2, 2)),
    K("park", "attraction", ("Parks", "Active Life"), ("Hiking", "Dog Parks", "Playgrounds"),
      ("lakeside trail", "splash pad", "boardwalk", "sunset overlook", "riverfront lawn", "desert trail",
       "old oak grove", "bike loop"),
      ("Park", "State Park", "Riverfront Park", "Nature Preserve"), (1,)),
    K("garden", "attraction", ("Botanical Gardens", "Active Life"), ("Parks", "Venues & Event Spaces"),
      ("rose garden", "Japanese garden", "cactus garden", "orchid conservatory", "butterfly garden",
       "holiday light display"),
      ("Botanical Garden", "Gardens", "Conservatory"), (1, 2)),
    K("tour_walking", "attraction", ("Tours", "Walking Tours", "Hotels & Travel"), ("Historical Tours", "Food Tours"),
      ("ghost tour", "cemetery stop", "historic homes stop", "food tasting stops", "architecture walk",
       "speakeasy stop", "mural walk"),
      ("Walking Tours", "Ghost Tours", "History Tours", "Food Tours"), (2, 2)),
    K("tour_boat", "attraction", ("Tours", "Boat Tours", "Hotels & Travel"), ("Boating", "Active Life"),
      ("swamp boat ride", "sunset cruise", "dolphin watch", "river cruise", "kayak paddle"),
      ("Boat Tours", "River Cruises", "Swamp Tours"), (2, 3), ("New Orleans", "Tampa")),
    K("nightlife_cocktail", "attraction", ("Nightlife", "Bars", "Cocktail Bars"), ("Lounges", "Speakeasies"),
      ("house old fashioned", "smoked cocktail", "rooftop deck", "mezcal list", "late-night menu"),
      ("Lounge", "Cocktail Bar", "Social Club", "Speakeasy"), (2, 3)),
    K("nightlife_music", "attraction", ("Nightlife", "Music Venues", "Arts & Entertainment"), ("Bars", "Jazz & Blues", "Dance Clubs"),
      ("live jazz", "honky-tonk band", "open mic night", "blues jam", "dance floor", "brass band"),
      ("Jazz Club", "Honky Tonk", "Music Hall", "Blues Bar"), (1, 2), ("Nashville", "New Orleans")),
    K("nightlife_brewery", "attraction", ("Breweries", "Food", "Nightlife"), ("Beer Gardens", "Bars"),
      ("hazy IPA", "barrel-aged stout", "brewery tour", "beer garden", "flight of sours"),
      ("Brewing Co.", "Brewery", "Beer Hall"), (1, 2)),
    K("nightlife_comedy", "attraction", ("Nightlife", "Comedy Clubs", "Arts & Entertainment"), ("Bars",),
      ("comedy lineup", "improv show", "open mic", "headliner set"),
      ("Comedy Club", "Improv", "Laugh Lounge"), (2,)),
    K("zoo", "attraction", ("Zoos", "Active Life"), ("Aquariums", "Arts & Entertainment"),
      ("sea lion show", "giraffe feeding", "shark tunnel", "penguin exhibit", "reptile house", "elephant habitat"),
      ("Zoo", "Aquarium", "Wildlife Park"), (2, 2)),
    K("theater", "attraction", ("Performing Arts", "Arts & Entertainment"), ("Opera & Ballet", "Music Venues"),
      ("Broadway tour", "symphony night", "balcony seats", "historic auditorium", "ballet season"),
      ("Theatre", "Performing Arts Center", "Opera House", "Playhouse"), (2, 3)),
    K("landmark", "attraction", ("Landmarks & Historical Buildings", "Public Services & Government"), ("Tours", "Museums"),
      ("observation deck", "historic lobby", "tram ride", "stained glass dome", "clock tower", "old courthouse steps"),
      ("Historic Site", "Tower", "Old Courthouse", "Cathedral"), (1,)),
    K("casino", "attraction", ("Casinos", "Arts & Entertainment"), ("Nightlife", "Bars"),
      ("poker room", "craps tables", "sportsbook", "slot floor", "high-limit lounge"),
      ("Casino", "Gaming Hall"), (2, 3), ("Reno",)),
    K("aquarium", "attraction", ("Aquariums", "Arts & Entertainment"), ("Venues & Event Spaces", "Education"),
      ("jellyfish gallery", "stingray touch pool", "coral reef tank", "otter habitat", "shark tunnel"),
      ("Aquarium", "Sea Life Center"), (2, 3), ("New Orleans", "Tampa")),
    K("stadium", "attraction", ("Stadiums & Arenas", "Arts & Entertainment"), ("Sports Clubs", "Venues & Event Spaces"),
      ("upper deck views", "stadium tour", "concourse food", "home opener", "bleacher seats"),
      ("Stadium", "Arena", "Ballpark", "Field"), (2, 3)),
    K("amusement", "attraction", ("Amusement Parks", "Active Life"), ("Water Parks", "Arcades", "Go Karts"),
      ("wooden roller coaster", "lazy river", "wave pool", "Ferris wheel", "go-kart track"),
      ("Adventure Park", "Fun Park", "Water Park"), (2, 3), ("Tampa",)),
    K("escape", "attraction", ("Escape Games", "Active Life"), ("Arcades", "Team Building Activities", "Bowling"),
      ("heist room", "haunted mansion room", "lost temple room", "bowling lanes", "retro arcade"),
      ("Escape Rooms", "Game Room", "Lanes"), (2,)),
    K("winery", "attraction", ("Wineries", "Food", "Arts & Entertainment"), ("Wine Tasting Room", "Distilleries", "Wine Tours"),
      ("tasting flight", "barrel room tour", "bourbon tasting", "vineyard patio", "gin flight"),
      ("Winery", "Distillery", "Cellars"), (2, 3), ("Nashville", "Saint Louis")),
    K("hiking", "attraction", ("Hiking", "Active Life"), ("Parks", "Mountain Biking", "Nature Preserves", "Rock Climbing"),
      ("summit trail", "canyon loop", "saguaro forest", "river overlook", "wildflower meadow"),
      ("Trailhead", "Canyon Trail", "Nature Area"), (1,), ("Tucson", "Reno")),
    K("beach", "attraction", ("Beaches", "Active Life"), ("Parks", "Paddleboarding", "Kayaking"),
      ("white sand", "sunset pier", "dolphin sightings", "paddleboard rentals", "shell beach"),
      ("Beach", "Beach Park", "Shores"), (1,), ("Tampa",)),
    K("historic_tour", "attraction", ("Historical Tours", "Tours"), ("Bus Tours", "Walking Tours", "Art Tours"),
      ("trolley ride", "cemetery tour", "mansion tour", "bus loop", "riverfront tour"),
      ("Trolley Tours", "Heritage Tours", "City Tours"), (2,)),
    K("cinema", "attraction", ("Cinema", "Arts & Entertainment"), ("Bars", "Music Venues"),
      ("drive-in screen", "art house screening", "classic movie night", "recliner seats"),
      ("Cinema", "Picture House", "Drive-In"), (1, 2)),
    K("gallery", "attraction", ("Art Galleries", "Shopping", "Arts & Entertainment"), ("Public Art",),
      ("rotating local show", "glassblowing demo", "First Friday opening", "ceramics room"),
      ("Gallery", "Art Space", "Studio"), (1, 2)),
)
OTHER_KINDS: tuple[Kind, ...] = (
    K("dentist", "other", ("Dentists", "Health & Medical", "General Dentistry"), ("Cosmetic Dentists",), (), ("Dental",), (2,)),
    K("auto", "other", ("Automotive", "Auto Repair"), ("Oil Change Stations", "Tires"), (), ("Auto Care", "Garage"), (2,)),
    K("salon", "other", ("Beauty & Spas", "Hair Salons"), ("Nail Salons", "Waxing"), (), ("Salon", "Studio"), (2,)),
    K("grocery", "other", ("Food", "Grocery"), ("Specialty Food", "Convenience Stores"), (), ("Market", "Grocery"), (1, 2)),
    K("car_rental", "other", ("Hotels & Travel", "Car Rental"), ("Transportation",), (), ("Car Rental", "Rent-A-Car"), (2,)),
    K("gym", "other", ("Active Life", "Gyms", "Fitness & Instruction"), ("Trainers",), (), ("Fitness", "Gym"), (2,)),
    K("plumber", "other", ("Home Services", "Plumbing"), ("Contractors",), (), ("Plumbing", "Rooter"), (2,)),
    K("shop", "other", ("Shopping", "Fashion", "Women's Clothing"), ("Accessories",), (), ("Boutique", "Outfitters"), (2, 3)),
)
KINDS_BY_TYPE = {"restaurant": RESTAURANT_KINDS, "hotel": HOTEL_KINDS, "attraction": ATTRACTION_KINDS}

NAME_WORDS = (
    "Magnolia", "Cypress", "Oak", "Willow", "Copper", "Iron", "Blue Heron", "Red Fox", "Silver", "Golden",
    "Harbor", "River", "Lantern", "Juniper", "Maple", "Cedar", "Union", "Liberty", "Heritage", "Crescent",
    "Sparrow", "Starling", "Anchor", "Bluebird", "Olive", "Saffron", "Ember", "Hearth", "Compass", "Canal",
    "Market", "Station", "Elm", "Birch", "Laurel", "Thistle", "Marigold", "Sunset", "Highland", "Meridian",
)  # fmt: skip
CITY_WORDS = {
    "Indianapolis": ("Circle City", "Hoosier", "Monon", "Mass Ave", "Fountain", "Speedway"),
    "Nashville": ("Music City", "Cumberland", "Broadway", "Honky", "Gulch", "Belmont"),
    "New Orleans": ("Bayou", "Crescent City", "Bourbon", "Magazine", "Tchoupitoulas", "Marigny"),
    "Philadelphia": ("Liberty Bell", "Schuylkill", "Rittenhouse", "Fishtown", "Passyunk", "Penn"),
    "Reno": ("Sierra", "Truckee", "Comstock", "Tahoe", "Silver State", "Washoe"),
    "Saint Louis": ("Gateway", "Arch", "Soulard", "Forest Park", "Delmar", "Lafayette"),
    "Tampa": ("Ybor", "Bayshore", "Gulf", "Hillsborough", "Seminole", "Channel"),
    "Tucson": ("Saguaro", "Sonoran", "Catalina", "Rincon", "Old Pueblo", "Mesquite"),
}
SURNAMES = (
    "Baker", "Romano", "Nguyen", "Garcia", "O'Malley", "Patel", "Dubois", "Kowalski", "Jackson", "Moreau",
    "Bianchi", "Schmidt", "Alvarez", "Chen", "Fitzgerald", "Delgado", "Haddad", "Kim", "Lombardi", "Walsh",
)  # fmt: skip
STREETS = (
    "Main", "Market", "Oak", "Magnolia", "Broad", "Washington", "Jefferson", "Lincoln", "Church", "Elm", "Park",
    "River", "Canal", "Chestnut", "Walnut", "Spruce", "Pine", "Locust", "Grand", "Union", "Mill", "High",
)  # fmt: skip
STREET_TYPES = ("St", "Ave", "Blvd", "Rd", "Dr", "Pkwy", "Ln")
CITY_SPELLINGS = {
    # canonical city -> (spelling, weight): the quirks the reader must normalise
    "Saint Louis": (("Saint Louis", 0.6), ("St. Louis", 0.25), ("St Louis", 0.1), ("st. louis ", 0.05)),
    "New Orleans": (("New Orleans", 0.95), ("new  orleans", 0.05)),
    "Tampa": (("Tampa", 0.95), ("Tampa Bay", 0.05)),
    "Philadelphia": (("Philadelphia", 0.97), ("Philly", 0.03)),
    "Nashville": (("Nashville", 0.97), ("Nashville-Davidson", 0.03)),
}
POSTAL_PREFIX = {
    "Indianapolis": "462", "Nashville": "372", "New Orleans": "701", "Philadelphia": "191", "Reno": "895",
    "Saint Louis": "631", "Tampa": "336", "Tucson": "857",
}  # fmt: skip
OTHER_CITIES = (  # (city, state, lat, lon): businesses outside the 8 Trace cities
    ("Clearwater", "FL", 27.9659, -82.8001), ("Metairie", "LA", 29.9841, -90.1529), ("Sparks", "NV", 39.5349, -119.7527),
    ("Franklin", "TN", 35.9251, -86.8689), ("Carmel", "IN", 39.9784, -86.1180), ("Cherry Hill", "NJ", 39.9348, -75.0307),
    ("Santa Barbara", "CA", 34.4208, -119.6982), ("Edmonton", "AB", 53.5461, -113.4938), ("Boise", "ID", 43.6150, -116.2023),
    ("Saint Petersburg", "FL", 27.7676, -82.6403), ("Kenner", "LA", 29.9941, -90.2417), ("Clayton", "MO", 38.6426, -90.3237),
)  # fmt: skip
STAR_WEIGHTS = {1.0: 1, 1.5: 2, 2.0: 3, 2.5: 5, 3.0: 8, 3.5: 15, 4.0: 26, 4.5: 24, 5.0: 10}  # mean 3.84 (Table 3: 3.8)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


# ---------------------------------------------------------------------------------------------------
# Scale
# ---------------------------------------------------------------------------------------------------
def pois_per_cell(scale: float) -> int:
    return max(2, math.ceil(BASE_POIS_PER_CELL * (scale if scale <= 1 else math.sqrt(scale))))


def review_factor(scale: float) -> float:
    return 1.0 if scale <= 1 else math.sqrt(scale)


# ---------------------------------------------------------------------------------------------------
# Businesses
# ---------------------------------------------------------------------------------------------------
@dataclass
class _Business:
    record: dict[str, Any]  # the business line, as written
    facts: PoiFacts
    n_reviews: int
    stars: float
    seed_key: str


def _yelp_id(rng: random.Random) -> str:
    return "".join(rng.choices(ID_ALPHABET, k=22))


def _weighted(rng: random.Random, pairs: tuple[tuple[Any, float], ...] | dict) -> Any:
    items = list(pairs.items()) if isinstance(pairs, dict) else list(pairs)
    return rng.choices([k for k, _ in items], weights=[w for _, w in items], k=1)[0]


def _lit(value: Any, rng_u: bool) -> str:
    """How Yelp writes a value: the repr of a Python literal; strings sometimes with a u prefix."""
    if isinstance(value, str):
        return ("u" if rng_u else "") + repr(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{'u' if rng_u else ''}{k!r}: {v!r}" for k, v in value.items())
        return "{" + inner + "}"
    return repr(value)


class _CityLayout:
    """Neighbourhood clusters around a city's centre: its landmarks plus a few random hubs."""

    def __init__(self, city: str, rng: random.Random):
        c = CITIES[city]
        self.city = city
        self.lat0, self.lon0 = c.latitude, c.longitude
        self.landmarks = dict(CITY_LANDMARKS.get(city, {}))
        hubs = list(self.landmarks.values())
        for _ in range(6):
            d = rng.uniform(2.0, 9.0)
            a = rng.uniform(0, 2 * math.pi)
            hubs.append(self._offset(self.lat0, self.lon0, d * math.cos(a), d * math.sin(a)))
        self.hubs = hubs
        self.weights = [3.0] * len(self.landmarks) + [1.0] * (len(hubs) - len(self.landmarks))

    def _offset(self, lat: float, lon: float, north_km: float, east_km: float) -> tuple[float, float]:
        return lat + north_km / 111.0, lon + east_km / (111.0 * math.cos(math.radians(lat)))

    def place(self, rng: random.Random) -> tuple[float, float]:
        if rng.random() < 0.72:
            hub = rng.choices(self.hubs, weights=self.weights, k=1)[0]
            sigma = rng.choice((0.15, 0.25, 0.4))  # km: dense clusters, many POIs within 500 m
            lat, lon = self._offset(hub[0], hub[1], rng.gauss(0, sigma), rng.gauss(0, sigma))
        else:
            d = 12.0 * math.sqrt(rng.random())
            a = rng.uniform(0, 2 * math.pi)
            lat, lon = self._offset(self.lat0, self.lon0, d * math.cos(a), d * math.sin(a))
        return round(lat, 7), round(lon, 7)

    def nearest_landmark(self, lat: float, lon: float, within_km: float = 1.2) -> str | None:
        best, best_d = None, within_km
        for name, (la, lo) in self.landmarks.items():
            d = _km(lat, lon, la, lo)
            if d <= best_d:
                best, best_d = name, d
        return best


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(a))


def _pick_kind(rng: random.Random, kinds: tuple[Kind, ...], city: str) -> Kind:
    weights = [3.0 if city in k.cities else (1.0 if not k.cities else 0.25) for k in kinds]
    return rng.choices(kinds, weights=weights, k=1)[0]


def _name(rng: random.Random, kind: Kind, city: str, used: set[str]) -> str:
    noun = rng.choice(kind.nouns)
    for attempt in range(50):
        pattern = rng.randrange(5)
        word = rng.choice(NAME_WORDS)
        if pattern == 0:
            name = f"{rng.choice(SURNAMES)}'s {noun}"
        elif pattern == 1:
            name = f"{rng.choice(CITY_WORDS[city]) if city in CITY_WORDS else word} {noun}"
        elif pattern == 2:
            name = f"The {word} {noun}"
        elif pattern == 3:
            name = f"{word} & {rng.choice(NAME_WORDS)} {noun}" if attempt > 10 else f"{word} {noun}"
        else:
            name = f"{word} {rng.choice(('House', 'Street', 'Corner', 'Yard', 'Row'))} {noun}"
        if kind.name == "museum_art" and rng.random() < 0.5:
            name = f"{city} {noun}" if attempt == 0 else f"{word} {noun}"
        if name not in used:
            used.add(name)
            return name
    name = f"{name} {len(used)}"
    used.add(name)
    return name


def _categories(rng: random.Random, kind: Kind) -> list[str]:
    cats = list(kind.categories)
    extra = [c for c in kind.optional if rng.random() < 0.35]
    cats += extra
    rng.shuffle(cats)  # Yelp lists categories in no particular order
    return cats


def _bool(rng: random.Random, p_true: float) -> bool:
    return rng.random() < p_true


def _attributes(rng: random.Random, kind: Kind, price: int, city: str) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """Yelp-style stringified attributes and the canonical facts they encode (for the review text)."""
    t = kind.poi_type
    u = rng.random() < 0.45  # older records: u'...' strings
    facts: dict[str, Any] = {}
    raw: dict[str, str] = {}

    def put(yelp: str, canonical: str | None, value: Any) -> None:
        if rng.random() < 0.03:  # Yelp sometimes stores the string "None"
            raw[yelp] = "None"
            return
        raw[yelp] = _lit(value, u)
        if canonical is not None:
            facts[canonical] = value

    if t == "attraction" and rng.random() < 0.25:
        return None, {}
    if t == "other" and rng.random() < 0.4:
        return None, {}
    put("BusinessAcceptsCreditCards", "accepts_credit_cards", _bool(rng, 0.95))
    if t in ("restaurant", "hotel") or (t == "attraction" and rng.random() < 0.6):
        raw["RestaurantsPriceRange2"] = "None" if rng.random() < 0.01 else str(price)
    parking = {k: rng.random() < p for k, p in (("garage", 0.2), ("street", 0.45), ("validated", 0.05),
                                                  ("lot", 0.45), ("valet", 0.08 + 0.2 * (price >= 3)))}
    if rng.random() < 0.15:
        parking[rng.choice(list(parking))] = None  # Yelp's None inside the dict
    put("BusinessParking", None, parking)
    facts["parking"] = [k for k, v in parking.items() if v]
    put("WheelchairAccessible", "wheelchair_accessible", _bool(rng, 0.85))
    put("GoodForKids", "good_for_kids", _bool(rng, 0.75 if t != "attraction" or not kind.name.startswith("nightlife") else 0.1))
    put("DogsAllowed", "dogs_allowed", _bool(rng, 0.3 if t != "attraction" else 0.2))
    put("BikeParking", "bike_parking", _bool(rng, 0.7))
    if t in ("restaurant", "hotel") or kind.name.startswith("nightlife"):
        put("WiFi", "wifi", rng.choices(("free", "no", "paid"), weights=(6, 3, 0.4 if t != "hotel" else 1.5), k=1)[0])
    if t == "restaurant" or kind.name.startswith("nightlife"):
        noise = rng.choices(("quiet", "average", "loud", "very_loud"),
                            weights=(2, 6, 2, 0.6) if t == "restaurant" else (0.3, 3, 4, 2), k=1)[0]
        put("NoiseLevel", "noise_level", noise)
        put("OutdoorSeating", "outdoor_seating", _bool(rng, 0.5))
        put("RestaurantsGoodForGroups", "good_for_groups", _bool(rng, 0.8))
        put("HasTV", "has_tv", _bool(rng, 0.6 if "Bars" in kind.categories + kind.optional else 0.4))
        put("HappyHour", "happy_hour", _bool(rng, 0.4))
        alcohol = rng.choices(("none", "beer_and_wine", "full_bar"),
                              weights=(3, 1.5, 3) if t == "restaurant" else (0, 1, 5), k=1)[0]
        if kind.name in ("cafe", "vegan", "cheesesteak", "sonoran") and rng.random() < 0.7:
            alcohol = "none"
        put("Alcohol", "alcohol", alcohol)
        ambience_keys = ("romantic", "intimate", "classy", "hipster", "divey", "touristy", "trendy", "upscale", "casual")
        amb = {k: False for k in ambience_keys}
        if price >= 3:
            amb[rng.choice(("classy", "upscale", "romantic", "intimate"))] = True
        else:
            amb[rng.choice(("casual", "casual", "trendy", "hipster", "divey", "touristy"))] = True
        if rng.random() < 0.3:
            amb[rng.choice(ambience_keys)] = True
        if rng.random() < 0.1:
            amb[rng.choice(ambience_keys)] = None
        put("Ambience", None, amb)
        facts["ambience"] = [k for k in ambience_keys if amb[k]]
    if t == "restaurant":
        put("RestaurantsReservations", "reservations", _bool(rng, 0.25 + 0.2 * price))
        put("RestaurantsTakeOut", "takeout", _bool(rng, 0.9 if price <= 2 else 0.5))
        put("RestaurantsDelivery", "delivery", _bool(rng, 0.55 if price <= 2 else 0.2))
        put("RestaurantsAttire", None, "casual" if price <= 2 or rng.random() < 0.6 else rng.choice(("dressy", "formal")))
        meal_keys = ("dessert", "latenight", "lunch", "dinner", "brunch", "breakfast")
        meals = {k: False for k in meal_keys}
        if kind.name in ("breakfast", "cafe"):
            meals["breakfast"] = meals["brunch"] = True
        else:
            meals["dinner"] = True
            meals["lunch"] = rng.random() < 0.7
        meals["latenight"] = rng.random() < 0.12
        meals["dessert"] = rng.random() < 0.15
        if rng.random() < 0.85:
            put("GoodForMeal", None, meals)
            facts["good_for_meal"] = [k for k in meal_keys if meals[k]]
        if kind.name in ("vegan", "indian", "mediterranean", "thai") or rng.random() < 0.08:
            diet = {k: False for k in ("dairy-free", "gluten-free", "vegan", "kosher", "halal", "soy-free", "vegetarian")}
            if kind.name == "vegan":
                diet["vegan"] = diet["vegetarian"] = diet["dairy-free"] = True
            else:
                diet[rng.choice(("gluten-free", "vegan", "vegetarian", "halal"))] = True
            put("DietaryRestrictions", None, diet)
            facts["dietary"] = [k for k, v in diet.items() if v]
    if t == "hotel":
        amenities = [a for a, p in (("pool", 0.55 if kind.name != "hostel" else 0.0), ("gym", 0.5), ("breakfast", 0.5),
                                    ("shuttle", 0.25), ("spa", 0.5 if kind.name == "resort" else 0.05),
                                    ("bar", 0.35)) if rng.random() < p]
        facts["_amenities"] = amenities
    keep = rng.random()
    if keep < 0.1:  # a sparse record, as many real ones are
        raw = dict(list(raw.items())[: max(1, len(raw) // 3)])
    return raw, facts


def _hours(rng: random.Random, kind: Kind) -> dict[str, str] | None:
    if rng.random() < 0.15:
        return None
    if kind.poi_type == "hotel":
        return {d: "0:0-0:0" for d in DAYS}
    open_h = rng.choice((6, 7, 9, 10, 11, 16, 17)) if kind.poi_type != "attraction" else rng.choice((8, 9, 10, 17, 19))
    close_h = min(open_h + rng.choice((6, 8, 10, 11)), 26)
    days = list(DAYS) if rng.random() < 0.6 else [d for d in DAYS if d != "Monday"]
    return {d: f"{open_h}:0-{close_h % 24}:{rng.choice(('0', '30'))}" for d in days}


def _n_reviews(rng: random.Random, factor: float) -> int:
    if rng.random() < FEW_REVIEWS_SHARE:
        return rng.randint(0, 2)
    n = 3 + int(rng.lognormvariate(math.log(REVIEW_MEDIAN * factor), REVIEW_SIGMA))
    return min(n, int(400 * factor))


def _make_business(i: int, seed: int, kind: Kind, city: str, state: str, layout: _CityLayout | None,
                   other_coords: tuple[float, float] | None, used_names: set[str], factor: float,
                   city_spelling: str) -> _Business:
    key = f"trace-synth:{seed}:{i}"
    rng = random.Random(key)
    business_id = _yelp_id(rng)
    price = rng.choice(kind.price)
    stars = _weighted(rng, STAR_WEIGHTS)
    if layout is not None:
        lat, lon = layout.place(rng)
        landmark = layout.nearest_landmark(lat, lon)
    else:  # a business outside the Trace cities, scattered around that town's centre
        lat0, lon0 = other_coords or (0.0, 0.0)
        lat = round(lat0 + rng.gauss(0, 0.03), 7)
        lon = round(lon0 + rng.gauss(0, 0.03), 7)
        landmark = None
    name = _name(rng, kind, city, used_names)
    raw_attrs, facts = _attributes(rng, kind, price, city)
    n_reviews = _n_reviews(rng, factor) if kind.poi_type != "other" else rng.randint(0, 6)
    review_count = n_reviews + int(n_reviews * rng.uniform(0.0, 0.3))
    specialties = rng.sample(kind.items, min(len(kind.items), rng.randint(4, 6))) if kind.items else []
    record = {
        "business_id": business_id,
        "name": name,
        "address": f"{rng.randint(10, 9899)} {rng.choice(STREETS)} {rng.choice(STREET_TYPES)}",
        "city": city_spelling,
        "state": state,
        "postal_code": f"{POSTAL_PREFIX.get(city, '100')}{rng.randint(0, 99):02d}",
        "latitude": lat,
        "longitude": lon,
        "stars": stars,
        "review_count": review_count,
        "is_open": 1 if rng.random() < 0.8 else 0,
        "attributes": raw_attrs,
        "categories": ", ".join(_categories(rng, kind)) if rng.random() > 0.003 or kind.poi_type == "other" else None,
        "hours": _hours(rng, kind),
    }
    if kind.poi_type == "other" and rng.random() < 0.1:
        record["categories"] = None  # Yelp has a few businesses without categories
    facts_obj = PoiFacts(
        poi_type=kind.poi_type, kind=kind.name, name=name, city=city, price=price if raw_attrs else None,
        specialties=specialties, staff=rng.sample(FIRST_NAMES, 3), landmark=landmark, attrs=facts,
    )
    return _Business(record, facts_obj, n_reviews, stars, key)


def generate_businesses(seed: int = SEED, scale: float = 1.0) -> list[_Business]:
    """All businesses of the bundle, in file order (shuffled across cities and types, as Yelp's file is)."""
    n_cell = pois_per_cell(scale)
    factor = review_factor(scale)
    rng = random.Random(f"trace-synth:{seed}:layout")
    out: list[_Business] = []
    i = 0
    for city in CITY_NAMES:
        layout = _CityLayout(city, rng)
        state = CITIES[city].state
        used: set[str] = set()
        spellings = CITY_SPELLINGS.get(city, ((city, 1.0),))
        plan: list[Kind] = []
        for kinds in KINDS_BY_TYPE.values():
            plan += [_pick_kind(rng, kinds, city) for _ in range(n_cell)]
        n_other = max(1, round(len(plan) * NON_TOURISM_SHARE))
        plan += [rng.choice(OTHER_KINDS) for _ in range(n_other)]
        for kind in plan:
            spelling = _weighted(rng, spellings)
            out.append(_make_business(i, seed, kind, city, state, layout, None, used, factor, spelling))
            i += 1
    n_outside = max(2, round(len(out) * OTHER_CITY_SHARE))
    used_outside: set[str] = set()
    all_kinds = RESTAURANT_KINDS + HOTEL_KINDS + ATTRACTION_KINDS + OTHER_KINDS
    for _ in range(n_outside):
        city, state, lat, lon = rng.choice(OTHER_CITIES)
        kind = rng.choice(all_kinds)
        out.append(_make_business(i, seed, kind, city, state, None, (lat, lon), used_outside, factor, city))
        i += 1
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------------------------------------------
# Reviews
# ---------------------------------------------------------------------------------------------------
def _review_stars(rng: random.Random, business_stars: float) -> int:
    # centred a little above the business's stars: the 1..5 clamp pulls the mean towards 3 otherwise
    weights = [math.exp(-((k - business_stars - 0.35) ** 2) / (2 * 1.1**2)) for k in range(1, 6)]
    return rng.choices(range(1, 6), weights=weights, k=1)[0]


def _reviews_of(b: _Business) -> Iterator[dict[str, Any]]:
    rng = random.Random(b.seed_key + ":reviews")
    for _ in range(b.n_reviews):
        stars = _review_stars(rng, b.stars)
        when = DATE_START + timedelta(seconds=rng.randrange(DATE_SPAN_S))
        useful = int(rng.expovariate(0.8))
        yield {
            "review_id": _yelp_id(rng),
            "user_id": _yelp_id(rng),
            "business_id": b.record["business_id"],
            "stars": float(stars),
            "useful": useful,
            "funny": int(rng.expovariate(2.0)),
            "cool": int(rng.expovariate(1.5)),
            "text": compose_review(rng, b.facts, stars),
            "date": when.strftime("%Y-%m-%d %H:%M:%S"),
        }


def _line(record: dict[str, Any]) -> str:
    """A JSON line the way Yelp's dump writes it: compact, raw UTF-8, `/` escaped as `\\/`."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).replace("/", "\\/") + "\n"


def write_synthetic_bundle(out_dir: str | os.PathLike, seed: int = SEED, scale: float = 1.0, *,
                           progress: bool = False) -> Path:
    """Write the synthetic bundle into `out_dir` (created); returns the folder. Deterministic in (seed, scale)."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / SYNTHETIC_MANIFEST).unlink(missing_ok=True)  # written last: its presence marks a complete bundle
    businesses = generate_businesses(seed, scale)
    with atomic_open(out / YELP_BUSINESS_FILE, "w") as f:
        for b in businesses:
            f.write(_line(b.record))
    order_rng = random.Random(f"trace-synth:{seed}:review-order")
    n_reviews = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(b.n_reviews for b in businesses), desc="synthetic reviews", unit=" reviews",
                   unit_scale=True, mininterval=1.0)
    with atomic_open(out / YELP_REVIEW_FILE, "w") as f:
        for start in range(0, len(businesses), BLOCK):
            block = [_line(r) for b in businesses[start : start + BLOCK] for r in _reviews_of(b)]
            order_rng.shuffle(block)
            f.writelines(block)
            n_reviews += len(block)
            if bar is not None:
                bar.update(len(block))
    if bar is not None:
        bar.close()
    write_json(out / SYNTHETIC_MANIFEST, {
        "generator": "trace-bench synthetic Yelp bundle",
        "synth_version": SYNTH_VERSION,
        "seed": seed,
        "scale": scale,
        "businesses": len(businesses),
        "reviews": n_reviews,
        "pois_per_cell": pois_per_cell(scale),
        "note": "Synthetic data in the Yelp Open Dataset schema; not Yelp data. Built by trace_dataset.yelp.synth.",
    })
    log.info("synthetic bundle: %d businesses, %d reviews -> %s", len(businesses), n_reviews, out)
    return out
